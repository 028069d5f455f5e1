#include "tests/node/node_maxtext_pods.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tests/controlplane/real_node.h"
#include "tests/node/node_workloads.h"
#include "webhook/exporter_injection.h"

namespace graintune::testing {
namespace {

std::string UidOf(const kube::Json& pod) { return pod.value("/metadata/uid"_json_pointer, std::string()); }

}  // namespace

Result<TinyJobSetOptions> NodeMaxTextPods::Place(TinyJobSetOptions options) const {
  // On the node, mounted read-write at the same path: checkpoints outlive the pod, as a run's
  // bucket does, so a restart resumes from them.
  if (!cp_.real_node()) return Status::Error("no real node");
  options.out_dir = cp_.real_node()->dir() + "/maxtext-out";
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return Status::Error("creating " + options.out_dir + ": " + ec.message());
  options.writable_host_paths.push_back(options.out_dir);
  return OnRealNode(env_, std::move(options), image_, memory_limit_);
}

int NodeMaxTextPods::ShellPid(const kube::Json& pod) const {
  return FindPodTrainer(UidOf(pod), "bash", kMaxTextTrainerPattern).shell;
}

std::string NodeMaxTextPods::MetricsFile(const kube::Json& pod) const {
  if (!cp_.real_node()) return "";
  return cp_.real_node()->PodVolumeDir(UidOf(pod), webhook::kMetricsVolumeName) + "/metrics.jsonl";
}

std::string NodeMaxTextPods::LogTail(const kube::Json& pod) const {
  // The kubelet's own file first: it is there the moment the container wrote it, and until the
  // pod is deleted, also once the container has ended.
  if (cp_.real_node()) {
    const std::string dir = cp_.real_node()->dir() + "/pod-logs/" +
                            pod.value("/metadata/namespace"_json_pointer, std::string()) + "_" +
                            pod.value("/metadata/name"_json_pointer, std::string()) + "_" + UidOf(pod) +
                            "/maxtext";
    std::error_code ec;
    std::string newest;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".log" && it->path().string() > newest) newest = it->path().string();
    if (!newest.empty()) return TailOfFile(newest, 3000);
  }
  Result<std::string> logs =
      cp_.Kubectl({"logs", "-n", pod.value("/metadata/namespace"_json_pointer, std::string()),
                   pod.value("/metadata/name"_json_pointer, std::string()), "-c", "maxtext", "--tail", "30"});
  return logs.ok() ? *logs : logs.error();
}

Result<std::string> NodeMaxTextPods::Fail(const kube::Json&, int trainer_pid) const {
  if (trainer_pid <= 0) return Status::Error("no MaxText process to stop");
  if (::kill(trainer_pid, SIGKILL) != 0)
    return Status::Error("kill " + std::to_string(trainer_pid) + ": " + std::strerror(errno));
  return std::string("SIGKILL to MaxText's process: the container exits 137, backoffLimit 0 fails the Job");
}

}  // namespace graintune::testing
