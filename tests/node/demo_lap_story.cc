#include "tests/node/demo_lap_story.h"

#include <algorithm>

#include "tests/controlplane/demo_lap_status.h"
#include "tests/controlplane/demo_maxtext_story.h"
#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/process_tree.h"
#include "tests/node/node_lap.h"
#include "tests/node/node_workloads.h"

namespace graintune::testing::demo {
namespace {

using kube::Json;

constexpr char kNs[] = "maxtext-lap";
// Its own run name: the story's runs checkpointed under the node's output folder as "tiny", and
// a run named so would resume from their checkpoints (and refuse, being past its last step).
constexpr char kJobSet[] = "lapped";

}  // namespace

int TellLapStory(ControlPlane& cp, const NodeMaxTextPods& pods, const MaxTextEnv& maxtext, int step) {
  std::shared_ptr<kube::Client> client = cp.AdminClient();
  Step(std::to_string(step) + ". A practice lap: a new run measures its own pipeline before it keeps a value");
  // The story's last run still holds the node's TPU chips (its trainer frozen where it stopped).
  if (Result<std::string> r = cp.Kubectl({"delete", "jobsets", "--all", "-n", kMaxTextDemoNamespace}); !r.ok())
    return Stop(r.error());
  if (!WaitFor([&] { return PodsWith(*client, kMaxTextDemoNamespace, "").empty(); }, 120))
    return Stop("the story's last run still holds the node");
  Say("   (the runs of " + std::string(kMaxTextDemoNamespace) + " deleted: their pods held the node's TPU chips)");
  Result<TinyJobSetOptions> tiny =
      pods.Place({.ns = kNs, .name = kJobSet, .steps = kTinySteps, .extra_args = kTinyCheckpointing});
  if (!tiny.ok()) return Stop(tiny.error());
  if (Status s = CreateNamespaceWithPolicy(cp, kNs, 2); !s.ok()) return Stop(s.message());
  const std::string policy = LapPolicy(kNs, 2);
  if (Result<std::string> r = cp.Kubectl({"apply", "-f", "-"}, policy); !r.ok()) return Stop(r.error());
  Say("   namespace " + std::string(kNs) + ", whose GrainTunePolicy asks for a training lap:");
  Say("     " + policy.substr(policy.rfind("lap:")));
  Say("   $ kubectl apply -f tiny-jobset.yaml   # the tiny model, a run that checkpoints");
  Say(Indent(Text(cp.Kubectl({"apply", "-f", "-"}, TinyMaxTextJobSet(maxtext, *tiny)))));

  Json pod;
  if (!WaitFor([&] {
        const std::vector<Json> attempt = AttemptPods(*client, kNs, kJobSet, 0);
        if (attempt.size() != 1) return false;
        pod = attempt[0];
        return !PodAnnotation(pod, "graintune.dev/lap-value").empty();
      }, 480)) {
    Say(Indent(pods.LogTail(pod)));
    return Stop("the operator did not answer the lap");
  }
  Say("   admission gave " + std::to_string(WorkersOf(pod)) + " workers and wrapped the trainer's script with");
  Say("   graintune-launcher, which ran MaxText's own command for " + std::to_string(kNodeLapSteps) +
      " steps with checkpointing off and");
  Say("   its output in the pod; the operator read the lap from the exporter and answered on the pod:");
  Say("     graintune.dev/lap-value: " + PodAnnotation(pod, "graintune.dev/lap-value"));
  kube::ApiResult<Json> gt = client->Get(kube::resources::kGrainTunings, kNs, kJobSet);
  const Json lap = gt.ok() ? gt->value("/status/lap"_json_pointer, Json::object()) : Json::object();
  SayLapStatus(kNs, kJobSet, lap);
  if (!lap.contains("workers")) return Stop("the lap gave the run no value");
  const int value = lap["workers"];

  // The trainer, started by the launcher once the answer came, with the lap's value.
  const std::string uid = pod.value("/metadata/uid"_json_pointer, std::string());
  int shell = 0, grain = 0;
  size_t steps = 0;
  bool failed = false;  // the pod ended in failure: nothing more to wait for
  const bool started = WaitFor([&] {
    if (shell == 0) shell = TrainerShellAfterLap(uid);
    if (shell != 0) grain = std::max(grain, GrainWorkers(Descendants(shell), kMaxTextTrainerPattern));
    steps = ReadMaxTextMetricsFile(pods.MetricsFile(pod)).step_seconds.size();
    const kube::ApiResult<Json> now = client->Get(kube::resources::kPods, kNs, pod.value("/metadata/name"_json_pointer, std::string()));
    failed = now.ok() && now->value("/status/phase"_json_pointer, std::string()) == "Failed";
    return failed || (grain == value && steps >= 3);
  }, 300);
  if (!started || failed) {
    Say(Indent(pods.LogTail(pod)));
    return Stop(failed ? "the pod failed (its log above)" : "the trainer did not start with the lap's value");
  }
  Say("   The trainer started with grain_worker_count=" + std::to_string(value) + ": MaxText runs " +
      std::to_string(grain) + " Grain worker process(es) (counted in /proc) and wrote " +
      std::to_string(steps) + " steps so far. The run keeps this value for its life.");
  Say("\n   $ kubectl get graintunings -n " + std::string(kNs));
  Say(Indent(Text(cp.Kubectl({"get", "graintunings", "-n", kNs}))));
  if (Interrupted()) return 130;
  return 0;
}

}  // namespace graintune::testing::demo
