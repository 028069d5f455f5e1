#include "tests/controlplane/maxtext_pods.h"

namespace graintune::testing {
namespace {

std::string NameOf(const kube::Json& pod) {
  return pod.value("/metadata/name"_json_pointer, std::string());
}

}  // namespace

Result<TinyJobSetOptions> StandInMaxTextPods::Place(TinyJobSetOptions options) const {
  options.out_dir = cp_.dir() + "/maxtext-out";
  return options;
}

int StandInMaxTextPods::ShellPid(const kube::Json& pod) const {
  return runner_.TrainerPid(NameOf(pod)).value_or(0);
}

std::string StandInMaxTextPods::MetricsFile(const kube::Json& pod) const {
  return runner_.PodDir(NameOf(pod)) + "/metrics.jsonl";
}

std::string StandInMaxTextPods::LogTail(const kube::Json& pod) const {
  return TailOfFile(runner_.PodDir(NameOf(pod)) + "/trainer.log", 1500);
}

Result<std::string> StandInMaxTextPods::Fail(const kube::Json& pod, int) const {
  const std::string ns = pod.value("/metadata/namespace"_json_pointer, std::string());
  Result<std::string> r =
      cp_.Kubectl({"annotate", "pod", "-n", ns, NameOf(pod), "graintune.dev/test-terminate=Error"});
  if (!r.ok()) return r.status();
  return std::string("the stand-in kubelet reports the pod Failed");
}

}  // namespace graintune::testing
