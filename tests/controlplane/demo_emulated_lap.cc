#include "tests/controlplane/demo_emulated_lap.h"

#include <algorithm>
#include <filesystem>

#include "kube/config.h"
#include "tests/controlplane/demo_lap_status.h"
#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/tpu_nodes.h"

namespace graintune::testing::demo {
namespace {

using kube::Json;

constexpr char kNs[] = "lap-demo";
constexpr char kJobSet[] = "llama3-8b-v6e-4";
constexpr int kLapSteps = 20;
// The stand-in's pipeline: 32 records a step at 8 ms of cpu each, against 500 ms of compute:
// about half a core of data loading, so every lap and trainer fits this machine however many
// workers admission gives (each worker holds 16 MiB).
constexpr char kStandInFlags[] =
    "--compute-ms 500 --records-per-step 32 --record-cpu-us 8000 --worker-mib 16 --compile-ms 2000";

// Where the stand-in kubelet's `python3` runs maxtext_standin from: a link under the control
// plane's folder, so its command line (the exporter's trainer pattern) names this demo's
// stand-ins only.
std::string StandInLink(const ControlPlane& cp) { return cp.dir() + "/lap-standin/maxtext_standin"; }

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

// The example JobSet as a run of its own on one v6e-4 host, in the lap's namespace.
std::string SingleHostRun(const std::string& example) {
  std::string y = ReplaceAll(example, "llama3-8b-v6e-32", kJobSet);
  y = ReplaceAll(y, "namespace: default", std::string("namespace: ") + kNs);
  y = ReplaceAll(y, "parallelism: 8", "parallelism: 1");
  y = ReplaceAll(y, "completions: 8", "completions: 1");
  y = ReplaceAll(y, "gke-tpu-topology: 4x8", "gke-tpu-topology: 2x2");
  return ReplaceAll(y, "hostNetwork: true", "hostNetwork: false");  // KWOK: one address per pod
}

std::string LapPolicyYaml() {
  return std::string("apiVersion: graintune.dev/v1alpha1\nkind: GrainTunePolicy\n") +
         "metadata: {name: practice-lap}\nspec:\n  priority: 10\n"
         "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + kNs + "}}\n"
         "  maxWorkers: 64\n  lap: {mode: Training, steps: " + std::to_string(kLapSteps) + "}\n";
}

std::string Annotation(const Json& pod, const std::string& key) {
  return pod.value("/metadata/annotations"_json_pointer, Json::object()).value(key, "");
}

// Mean of the last `count` step times in a MaxText metrics file (0 when it has fewer).
double RecentStepSeconds(const std::vector<double>& seconds, size_t count) {
  if (seconds.size() < count) return 0;
  double sum = 0;
  for (size_t i = seconds.size() - count; i < seconds.size(); ++i) sum += seconds[i];
  return sum / static_cast<double>(count);
}

// Creates the namespace, its lap policy, the v6e-4 host and the run; says what it applied.
Status ApplyTheRun(ControlPlane& cp, const std::string& example) {
  Result<Json> node = TpuNode({.name = "gke-tpu-v6e-4-0", .topology = "2x2"});
  if (!node.ok()) return node.status();
  if (kube::ApiResult<Json> r = cp.AdminClient()->Create(kube::resources::kNodes, "", *node); !r.ok())
    return Status::Error("cannot create the v6e-4 host: " + r.error().message);
  if (Result<std::string> r = cp.Kubectl({"create", "namespace", kNs}); !r.ok()) return r.status();
  const std::string policy = LapPolicyYaml();
  if (Result<std::string> r = cp.Kubectl({"apply", "-f", "-"}, policy); !r.ok()) return r.status();
  Say("   a v6e-4 host (gke-tpu-v6e-4-0, ct6e-standard-4t, topology 2x2) and namespace " + std::string(kNs) +
      ", whose GrainTunePolicy asks for a training lap:");
  Say("     " + policy.substr(policy.rfind("lap:")));
  Say("   $ kubectl apply -f llama3-8b-v6e-4.yaml   # the example JobSet on one host: a new run that checkpoints");
  Result<std::string> applied = cp.Kubectl({"apply", "-f", "-"}, SingleHostRun(example));
  if (!applied.ok()) return applied.status();
  Say(Indent(*applied));
  return Status::Ok();
}

}  // namespace

Result<LappedPods> EmulatedLapPods(const ControlPlane& cp, const std::string& build_dir) {
  const std::string link = StandInLink(cp);
  const std::string folder = link.substr(0, link.rfind('/'));
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  std::filesystem::create_symlink(build_dir + "/tests/emulator/maxtext_standin", link, ec);
  if (ec) return Status::Error("cannot link the MaxText stand-in into " + folder + ": " + ec.message());
  // `python3 -m MaxText.train ...` in the pod's script runs the stand-in with MaxText's words.
  const std::string shim = folder + "/python3";
  if (Status s = WriteFile(shim, "#!/bin/sh\nexec " + link + " " + kStandInFlags + " -- \"$@\"\n"); !s.ok())
    return s;
  std::filesystem::permissions(shim, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
  const char* path = std::getenv("PATH");
  return LappedPods{.launcher_binary = build_dir + "/launcher/graintune-launcher",
                    .trainer = {.env = {"PATH=" + folder + ":" + (path ? path : "/usr/bin:/bin")},
                                .trainer_pattern = link,
                                .own_home = true}};
}

int TellEmulatedLapStory(ControlPlane& cp, const PodRunner& runner, const std::string& example, int step) {
  Step(std::to_string(step) + ". A practice lap: a new run measures its own pipeline before it keeps a value");
  if (Status s = ApplyTheRun(cp, example); !s.ok()) return Stop(s.message());
  Json pod;
  if (!WaitFor([&] {
        const std::vector<Json> attempt = AttemptPods(cp, kNs, kJobSet, 0);
        if (attempt.size() == 1) pod = attempt[0];
        return attempt.size() == 1 && !Annotation(pod, "graintune.dev/lap-value").empty();
      }, 180))
    return Stop("the operator did not answer the lap (logs in " + cp.dir() + ")");
  const std::string name = pod.value("/metadata/name"_json_pointer, std::string());
  Say("   admission gave " + std::to_string(WorkerCountOf(pod)) +
      " workers (the dataset kind's low-end rate, a step at 60% MFU) and wrapped the trainer's");
  Say("   script with graintune-launcher, which ran the job's own command for " + std::to_string(kLapSteps) +
      " steps with checkpointing");
  Say("   off and its output in the pod (MaxText is a stand-in here whose worker processes really spend cpu");
  Say("   on every record); graintune's exporter measured them in /proc, and the operator answered on the pod:");
  Say("     graintune.dev/lap-value: " + Annotation(pod, "graintune.dev/lap-value"));
  kube::ApiResult<Json> gt = cp.AdminClient()->Get(kube::resources::kGrainTunings, kNs, kJobSet);
  const Json lap = gt.ok() ? gt->value("/status/lap"_json_pointer, Json::object()) : Json::object();
  SayLapStatus(kNs, kJobSet, lap);
  if (!lap.contains("workers")) return Stop("the lap gave the run no value");
  const int value = lap["workers"];

  // The trainer, started by the launcher (in the pod's process) once the answer came.
  int workers = -1;
  size_t lines = 0;
  double step_seconds = 0;
  const bool started = WaitFor([&] {
    const std::optional<int> pid = runner.TrainerPid(name);
    if (pid) workers = GrainWorkers(Descendants(*pid), StandInLink(cp));
    const std::vector<double> steps = ReadMaxTextMetricsFile(runner.PodDir(name) + "/metrics.jsonl").step_seconds;
    lines = steps.size();
    step_seconds = RecentStepSeconds(steps, 3);
    return workers == value && step_seconds > 0;
  }, 120);
  if (!started) return Stop("the trainer did not start with the lap's value (logs in " + runner.PodDir(name) + ")");
  Say("   The trainer started with grain_worker_count=" + std::to_string(value) + ": " + std::to_string(workers) +
      " worker process(es) (counted in /proc), " + std::to_string(lines) + " steps so far at " +
      Fixed(step_seconds, 3) + " s a step. The run keeps this value for its life.");
  Say("\n   $ kubectl get graintunings -n " + std::string(kNs));
  Say(Indent(Text(cp.Kubectl({"get", "graintunings", "-n", kNs}))));
  if (Interrupted()) return 130;
  return 0;
}

}  // namespace graintune::testing::demo
