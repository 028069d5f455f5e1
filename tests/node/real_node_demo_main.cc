// graintune-demo-real-node: the demo's story on one real node (`scripts/demo.sh --real-node`).
// It starts the local control plane with a real kubelet + containerd + runc node labelled like a
// single-host TPU VM (ct6e-standard-4t, 2x2, google.com/tpu: 4), imports the images
// scripts/image.sh built from the Dockerfile, `helm install`s charts/graintune with them, and
// runs a single-host JobSet with grain_worker_count=-1 for real: the trainer (trainer_emulator
// from the test image) writes MaxText metrics lines into the shared emptyDir, the injected
// exporter sidecar serves them, the operator scrapes the pod's IP and records a trial, the
// trainer fails and the restart gets the recommended value. Then a trainer whose Grain-like
// workers outgrow the memory limit is OOMKilled and its restart is capped below that value.
//
// With --trainer maxtext (scripts/demo.sh --real-node --trainer maxtext) the story after the
// install is demo_maxtext_story.h's instead: MaxText's own trainer in a container of the test
// image, with this machine's pinned MaxText environment mounted (node_maxtext_pods.h), its Grain
// worker processes counted in the pod's cgroup, its metrics file read from the pod's emptyDir;
// then a new run in a namespace whose policy asks for a practice lap starts its trainer with the
// value its lap gave (demo_lap_story.h).
//
// Needs root (the node changes sysctls, mounts and cgroups; all restored when it stops) and the
// image variables scripts/image.sh prints (and, for MaxText, the GRAINTUNE_MAXTEXT_* variables
// scripts/lib/maxtext_trainer.sh prints). Stops everything it started when it ends or on
// Ctrl-C. Exit 0 when every step happened as told, 1 when one did not, 130 when interrupted.
//
//   graintune-demo-real-node --bin-dir DIR --source-dir DIR [--trainer emulator|maxtext]
#include <signal.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/demo_maxtext_story.h"
#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/demo_lap_story.h"
#include "tests/node/chart_on_node.h"
#include "tests/node/node_maxtext_pods.h"
#include "tests/node/node_test_support.h"
#include "tests/node/node_workloads.h"

namespace {

using graintune::kube::Json;
using namespace graintune::testing::demo;

// On the real node MaxText is asked for far more steps than the story needs and stopped once it
// wrote kTinySteps: a trainer that ends by itself would complete the Job, not fail it.
constexpr int kMaxTextStepsAsked = 1000;

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune;
  using namespace graintune::testing;
  std::string bin_dir, source_dir, trainer_kind = "emulator";
  bool usage_error = argc % 2 == 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    if (f == "--bin-dir") bin_dir = argv[i + 1];
    else if (f == "--source-dir") source_dir = argv[i + 1];
    else if (f == "--trainer") trainer_kind = argv[i + 1];
    else usage_error = true;
  }
  if (usage_error || bin_dir.empty() || source_dir.empty() || (trainer_kind != "emulator" && trainer_kind != "maxtext")) {
    std::cerr << "usage: graintune-demo-real-node --bin-dir DIR --source-dir DIR [--trainer emulator|maxtext]\n";
    return 2;
  }
  std::optional<MaxTextEnv> maxtext;
  if (trainer_kind == "maxtext" && !(maxtext = MaxTextFromEnvironment())) {
    std::cerr << "graintune-demo-real-node: --trainer maxtext needs the GRAINTUNE_MAXTEXT_* variables "
                 "(run it as: bash scripts/demo.sh --real-node --trainer maxtext)\n";
    return 2;
  }
  ::setenv("GRAINTUNE_CONTROLPLANE_BIN", bin_dir.c_str(), 1);
  Result<ControlPlaneOptions> env = NodeEnvironment();
  if (!env.ok()) {
    std::cerr << "graintune-demo-real-node: " << env.error() << "\n";
    return 1;
  }
  Result<BuiltImages> images = BuiltImagesFromEnvironment();
  if (!images.ok()) {
    std::cerr << "graintune-demo-real-node: " << images.error() << "\n";
    return 1;
  }
  StopOnSignals();

  Step("1. A local control plane with one real node (kubelet + containerd + runc)");
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(WithChartImagesOnNode(*env, *images));
  if (!started.ok()) {
    std::cerr << "graintune-demo-real-node: " << started.error() << "\n";
    return 1;
  }
  std::unique_ptr<ControlPlane> cp = std::move(started).value();
  std::shared_ptr<kube::Client> client = cp->AdminClient();
  Say("   etcd, kube-apiserver, controller-manager, scheduler and the JobSet controller on "
      "loopback; the node is this machine, labelled as a single-host v6e TPU VM:");
  Say(Indent(Text(cp->Kubectl({"get", "nodes", "-L", "node.kubernetes.io/instance-type", "-L",
                               "cloud.google.com/gke-tpu-topology"}))));
  Say("   images imported into its containerd (built by scripts/image.sh from the Dockerfile):");
  Say("     " + images->ref + ", " + images->test_ref + ", " + images->pause_ref);

  Step("2. helm install graintune, from that image");
  Say("   $ helm install gt charts/graintune -n graintune-system --create-namespace --set image.repository=... --wait");
  if (Status s = HelmInstallOnNode(*cp, source_dir + "/charts/graintune", images->ref); !s.ok()) {
    Say(Indent(s.message()));
    return Stop("helm install failed");
  }
  Say(Indent(Text(cp->Kubectl({"get", "pods", "-n", kReleaseNamespace, "-o", "wide"}))));

  if (maxtext) {
    Say("   MaxText's pods run the test image (" + images->test_ref + ") with this machine's pinned MaxText");
    Say("   environment mounted read-only (hostPath), as root, on the node's " +
        Text(cp->Kubectl({"get", "node", RealNode::kName, "-o", "jsonpath={.status.allocatable.cpu}"})) + " cpu.");
    const NodeMaxTextPods pods(*cp, *maxtext, images->test_ref);
    const int told = TellMaxTextStory(*cp, pods, *maxtext, kMaxTextStepsAsked);
    if (told != 0) return told;
    const int lapped = TellLapStory(*cp, pods, *maxtext, 7);
    if (lapped == 0) Say("\nDone: stopping everything this demo started (the host is restored).");
    return lapped;
  }

  Step("3. A single-host JobSet with grain_worker_count=-1");
  if (Status s = CreateNamespaceWithPolicy(*cp, "demo", 64); !s.ok()) return Stop(s.message());
  Say("   namespace demo with a GrainTunePolicy sized for this machine (" +
      Text(cp->Kubectl({"get", "node", RealNode::kName, "-o", "jsonpath={.status.allocatable.cpu}"})) +
      " cpu: no cores kept back for a trainer that has no TPU to feed)");
  const std::string jobset = SingleHostJobSet(
      "demo", "trainer", images->test_ref, "trainer_emulator",
      R"a([--workers, "$(M_GRAIN_WORKER_COUNT)", --metrics-file, "$(M_METRICS_FILE)", --steps, "80"])a",
      "1Gi");
  // The webhook learns of the new policy through its watch; a server-side dry run shows when.
  WaitFor(
      [&] {
        const std::optional<Json> j = AdmittedAsDryRun(*cp, jobset);
        return j && std::stoi(j->value("/metadata/annotations/graintune.dev~1first-attempt-worker-count"_json_pointer,
                                       "0")) >= 2;
      },
      30);
  Say("   $ kubectl apply -f trainer-jobset.yaml");
  Say(Indent(Text(cp->Kubectl({"apply", "-f", "-"}, jobset))));
  kube::ApiResult<Json> created = client->Get(kube::resources::kJobSets, "demo", "trainer");
  if (!created.ok()) return Stop("the JobSet was not created");
  const std::string first_value = created->value(
      "/metadata/annotations/graintune.dev~1first-attempt-worker-count"_json_pointer, "");
  if (first_value.empty()) return Stop("the API server did not call the webhook through its Service");
  Say("   The API server called the webhook through its Service: the first attempt gets " +
      first_value + " workers.");

  const Json pod = WaitForAttemptPod(
      *client, "demo", "trainer", 0,
      [](const Json& p) {
        return IsRunning(ContainerStatusOf(p, "containerStatuses", "trainer")) &&
               IsRunning(ContainerStatusOf(p, "initContainerStatuses", "graintune-exporter"));
      },
      std::chrono::seconds(90));
  if (pod.is_null()) return Stop("attempt 0's pod did not start");
  Say("   Attempt 0's pod runs, the exporter as a native sidecar (an init container that keeps running):");
  Say(Indent(DescribeStatuses(pod), "     "));
  Say("   trainer env M_GRAIN_WORKER_COUNT=" + EnvOf(pod, "trainer", "M_GRAIN_WORKER_COUNT"));

  Step("4. The operator scrapes the exporter over the pod's IP and records a trial");
  const std::string pod_ip = pod["status"].value("podIP", "");
  std::string steps;
  WaitFor(
      [&] {
        steps = Text(HttpGet("http://" + pod_ip + ":9431/metrics"));
        return steps.find("\ngraintune_exporter_lines ") != std::string::npos &&
               steps.find("\ngraintune_exporter_lines 0\n") == std::string::npos;
      },
      60);
  Say("   $ curl http://" + pod_ip + ":9431/metrics   (the steps the trainer wrote to the shared emptyDir)");
  for (const char* metric : {"graintune_exporter_step ", "graintune_exporter_step_time_seconds ",
                             "graintune_exporter_lines "}) {
    const size_t at = steps.find(std::string("\n") + metric);
    if (at != std::string::npos) Say("     " + steps.substr(at + 1, steps.find('\n', at + 1) - at - 1));
  }
  auto tuning = [&](const std::string& ns, const std::string& name) {
    kube::ApiResult<Json> gt = client->Get(kube::resources::kGrainTunings, ns, name);
    return gt.ok() ? gt->value("status", Json::object()) : Json::object();
  };
  // The recommendation once the trial stopped changing (the trainer wrote its last step).
  SettledRecommendation for_attempt_1(1);
  const bool recommended = WaitFor([&] { return for_attempt_1.Settled(tuning("demo", "trainer")); }, 180);
  const int next = for_attempt_1.workers();
  if (!recommended) return Stop("the operator recorded no trial");
  const Json status = tuning("demo", "trainer");
  Say("   trial: " + status["trials"][0].dump());
  Say("   recommendation for attempt 1: " + std::to_string(next) + " workers");
  Say("     " + status.value("/recommendation/reason"_json_pointer, ""));

  Step("5. The trainer fails; JobSet restarts it with the recommended value");
  const std::vector<int> trainer =
      PodProcesses(pod["metadata"].value("uid", ""), "/usr/local/bin/trainer_emulator");
  if (trainer.size() != 1 || ::kill(trainer[0], SIGTERM) != 0) return Stop("the trainer process was not found");
  Say("   (SIGTERM to the trainer's process: exit 143, backoffLimit 0 fails the Job)");
  const Json restarted = WaitForAttemptPod(
      *client, "demo", "trainer", 1,
      [](const Json& p) { return IsRunning(ContainerStatusOf(p, "containerStatuses", "trainer")); },
      std::chrono::seconds(120));
  if (restarted.is_null()) return Stop("attempt 1 did not start");
  Say("   Attempt 1's pod: grain_worker_count=" + EnvOf(restarted, "trainer", "M_GRAIN_WORKER_COUNT") +
      " (graintune.dev/attempt " +
      restarted["metadata"]["annotations"].value("graintune.dev/attempt", "") + ")");
  Say(Indent(DescribeStatuses(restarted), "     "));
  const bool restart_right = WorkersOf(restarted) == next;
  if (!restart_right) return Stop("attempt 1 did not get the recommendation");
  if (Result<std::string> r = cp->Kubectl({"delete", "jobset", "trainer", "-n", "demo"}); !r.ok())
    return Stop(r.error());
  WaitFor([&] { return PodsWith(*client, "demo", "").empty(); }, 60);

  Step("6. Grain workers that outgrow the memory limit: OOMKilled, and the next value is capped");
  const std::string oom_jobset = SingleHostJobSet(
      "demo", "hungry", images->test_ref, "grain_workers",
      R"a([--step-mib, "4", --step-interval-ms, "500", MaxText.train, base.yml])a", "256Mi");
  Say("   a JobSet whose trainer (as PID 1) starts grain_worker_count Grain-like workers, each");
  Say("   growing 8 MiB/s, under a 256Mi memory limit");
  Say(Indent(Text(cp->Kubectl({"apply", "-f", "-"}, oom_jobset))));
  auto terminated = [](const Json& p) {
    const Json s = ContainerStatusOf(p, "containerStatuses", "trainer");
    return s.is_object() ? s.value("state", Json::object()).value("terminated", Json()) : Json();
  };
  const Json oom_pod = WaitForAttemptPod(
      *client, "demo", "hungry", 0, [&](const Json& p) { return terminated(p).is_object(); },
      std::chrono::seconds(120));
  if (oom_pod.is_null()) return Stop("the trainer was not OOMKilled");
  Say("   Attempt 0 with " + std::to_string(WorkersOf(oom_pod)) + " workers ended:");
  Say(Indent(DescribeStatuses(oom_pod), "     "));
  const Json capped = WaitForAttemptPod(*client, "demo", "hungry", 1, [](const Json&) { return true; },
                                        std::chrono::seconds(120));
  if (capped.is_null()) return Stop("attempt 1 did not start");
  Say("   Attempt 1: " + std::to_string(WorkersOf(capped)) + " workers");
  Say("     " + capped["metadata"]["annotations"].value("graintune.dev/reason", ""));
  const bool capped_right = WorkersOf(capped) < WorkersOf(oom_pod) &&
                            terminated(oom_pod).value("reason", "") == "OOMKilled";

  Say("\n   $ kubectl get graintunings -n demo");
  Say(Indent(Text(cp->Kubectl({"get", "graintunings", "-n", "demo"}))));
  Say(capped_right ? "\nDone: stopping everything this demo started (the host is restored)."
                   : "\nThe OOMKilled attempt was not capped: stopping everything.");
  if (Interrupted()) return 130;
  return capped_right ? 0 : 1;
}
