// graintune-demo: the README's main job. On this machine it starts a real control plane with
// KWOK TPU nodes shaped like a v6e-32 slice (8 x ct6e-standard-4t), installs graintune
// from the Helm chart (local mode: the chart's CRDs, policy and webhook configuration; the
// webhook and operator binaries run here instead of in pods), applies the xpk-style Llama3-8B
// JobSet with grain_worker_count=-1 (a run that checkpoints), runs each pod's exporter and a
// trainer emulator, and tells what happens across a restart (the run keeps its value) and in the
// next run of the workload (it starts with the value the first run measured), then a practice
// lap on one more host (demo_emulated_lap.h). It stops everything it started when it ends or is
// interrupted.
//
//   graintune-demo --bin-dir DIR --source-dir DIR --build-dir DIR [--trainer emulator|maxtext]
//                  [--scrape-targets FILE]
//
// --trainer maxtext: MaxText's own trainer instead (demo_maxtext_story.h): one TPU host shaped
// like this machine and a tiny model trained for real; needs the GRAINTUNE_MAXTEXT_* variables
// (scripts/demo.sh --trainer maxtext builds and exports them).
// --scrape-targets: once the webhook and operator run, writes their /metrics addresses to FILE
// as a Prometheus file_sd list (scripts/dashboard-picture.sh scrapes the run with it).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <iostream>
#include <thread>

#include "base/base64.h"
#include "kube/config.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/demo_emulated_lap.h"
#include "tests/controlplane/demo_maxtext_story.h"
#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/pod_runner.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"

namespace {

using graintune::kube::Json;
using namespace graintune::testing::demo;

using namespace graintune;
using namespace graintune::testing;

// Steps 3 on with the emulator: the example Llama3-8B v6e-32 JobSet on 8 KWOK hosts, a run that
// checkpoints (as real runs do): starved at first, measured, restarted with the value it started
// with (its checkpoints hold Grain's iterator), then the next run of the workload starts with the
// value the first one measured. The exit code, as TellMaxTextStory's.
int TellLlamaStory(ControlPlane& cp, PodRunner& runner, const std::string& source_dir) {
  Step("3. Llama3-8B on v6e-32 with grain_worker_count=-1 (a deliberately starved start)");
  // The dataset annotation overstates what a worker delivers ~7x (as if the data were
  // pre-tokenized), so even sized for a run that keeps its value (x1.4, 60% MFU) the first run
  // starts with too few workers, like the measured 4-worker run.
  Result<std::string> manifest = kube::ReadFileText(source_dir + "/examples/llama3-8b-v6e-32-jobset.yaml");
  std::string y = *manifest;
  y.replace(y.find("graintune.dev/dataset: c4-en-raw"), 32,
            "graintune.dev/dataset: c4-en-raw\n    graintune.dev/tokens-per-second-per-worker: \"16000\"");
  for (size_t p = y.find("hostNetwork: true"); p != std::string::npos; p = y.find("hostNetwork: true"))
    y.replace(p, 17, "hostNetwork: false");  // KWOK gives host-network pods one shared address
  Say("   $ kubectl apply -f examples/llama3-8b-v6e-32-jobset.yaml");
  Say(Indent(Text(cp.Kubectl({"apply", "-f", "-"}, y))));
  auto js = cp.AdminClient()->Get(kube::resources::kJobSets, "default", "llama3-8b-v6e-32");
  const Json ann = (*js)["metadata"].value("annotations", Json::object());
  Say("   MaxText checkpoints this run (every 500 steps, with Grain's iterator), so the whole run keeps");
  Say("   one value; graintune annotated the JobSet with it:");
  Say("     graintune.dev/first-attempt-worker-count: " + ann.value("graintune.dev/first-attempt-worker-count", ""));
  Say("     graintune.dev/reason: " + ann.value("graintune.dev/reason", ""));

  // The pods of the newest attempt numbered `attempt` by graintune (a new run continues the count).
  auto pods_of = [&](int attempt) {
    kube::ListOptions lo;
    lo.label_selector = "jobset.sigs.k8s.io/jobset-name=llama3-8b-v6e-32";
    auto r = cp.AdminClient()->List(kube::resources::kPods, "default", lo);
    std::vector<Json> out;
    if (!r.ok()) return out;
    for (const Json& p : r->items)
      if (p["metadata"].value("annotations", Json::object()).value("graintune.dev/attempt", "") == std::to_string(attempt) &&
          !p["metadata"].contains("deletionTimestamp"))
        out.push_back(p);
    return out;
  };
  auto tuning = [&]() -> Json {
    auto r = cp.AdminClient()->Get(kube::resources::kGrainTunings, "default", "llama3-8b-v6e-32");
    return r.ok() ? *r : Json();
  };
  auto trial_of = [&](int attempt) -> Json {
    for (const Json& t : tuning()["status"].value("trials", Json::array()))
      if (t.value("attempt", -1) == attempt) return t;
    return Json::object();
  };
  // Prints the trial of `attempt` as the GrainTuning holds it.
  auto say_trial = [&](int attempt) {
    const Json tr = trial_of(attempt);
    Say("   trial: attempt " + std::to_string(attempt) + ", " + std::to_string(tr.value("workers", 0)) +
        " workers, steady step " + std::to_string(tr.value("stepTimeMeanSeconds", 0.0)).substr(0, 5) +
        " s (mean), " + std::to_string(tr.value("tflopsPerDevice", 0.0)).substr(0, 5) +
        " TFLOP/s per chip, data-bound: " + (tr.value("dataBound", false) ? "yes" : "no"));
  };
  auto value_of = [](const Json& pod) {
    return pod["metadata"]["annotations"].value("graintune.dev/worker-count", "");
  };
  auto fail_attempt = [&](int attempt) {
    for (const Json& p : pods_of(attempt))
      cp.Kubectl({"annotate", "pod", p["metadata"]["name"], "graintune.dev/test-terminate=Error"});
  };
  if (!WaitFor([&] { return pods_of(0).size() == 8 && runner.Started().size() >= 8; }, 90)) {
    return Stop("The pods of attempt 0 did not start");
  }
  const Json pod0 = pods_of(0)[0];
  const std::string first = value_of(pod0);
  Say("\n   Attempt 0: 8 pods, each with grain_worker_count=" + first +
      " in its script and the graintune-exporter sidecar:");
  const std::string script = pod0["spec"]["containers"][0]["command"].back();
  const size_t at = script.find("grain_worker_count=");
  Say("     ..." + script.substr(at > 60 ? at - 60 : 0, 90) + "...");

  Step("4. The operator measures attempt 0");
  if (!WaitFor([&] { return trial_of(0).contains("samples") &&
                            tuning()["status"].contains("nextRun"); }, 120)) return 1;
  WaitFor([&] { return tuning()["status"]["recommendation"].value("attempt", 0) == 1; }, 30);
  say_trial(0);
  Json g = tuning();
  Say("   recommendation for attempt 1: " + std::to_string(g["status"]["recommendation"].value("workers", 0)) +
      " workers; for the next run: " + std::to_string(g["status"]["nextRun"].value("workers", 0)));
  Say("     " + g["status"]["recommendation"].value("reason", ""));

  Step("5. Attempt 0 fails; JobSet restarts the slice, which resumes from its checkpoint");
  fail_attempt(0);
  if (!WaitFor([&] { return pods_of(1).size() == 8; }, 90)) return 1;
  const std::string kept = value_of(pods_of(1)[0]);
  Say("   Attempt 1: 8 new pods, each with grain_worker_count=" + kept +
      (kept == first ? " (the run's value: a resume with another count would stop MaxText early, exit 0)"
                     : " (NOT the run's value " + first + ")"));
  WaitFor([&] { return tuning()["status"].value("pinnedAttempt", -1) == 1; }, 60);
  for (const Json& c : tuning()["status"].value("conditions", Json::array()))
    if (c.value("type", "") == "ValuePinned") Say("   condition ValuePinned=" + c.value("status", "") + ": " + c.value("message", ""));

  Step("6. The run ends; the next run of the workload (a new run_name) starts with what it measured");
  WaitFor([&] { return trial_of(1).contains("samples"); }, 120);
  const int next_run = tuning()["status"]["nextRun"].value("workers", 0);
  fail_attempt(1);
  cp.Kubectl({"delete", "jobset", "llama3-8b-v6e-32", "--wait=false"});
  if (!WaitFor([&] {
        const Json e = tuning()["status"].value("endedAttempts", Json::array());
        return e.size() >= 2 && pods_of(1).empty();
      }, 90)) return 1;
  std::string run2 = y;
  for (size_t p = run2.find("run_name=llama3-8b-v6e-32 "); p != std::string::npos; p = std::string::npos)
    run2.replace(p, 26, "run_name=llama3-8b-v6e-32-run2 ");
  Say("   $ kubectl apply -f llama3-8b-v6e-32-run2.yaml   # the same JobSet, run_name=llama3-8b-v6e-32-run2");
  Say(Indent(Text(cp.Kubectl({"apply", "-f", "-"}, run2))));
  if (!WaitFor([&] { return pods_of(2).size() == 8; }, 90)) return 1;
  const std::string second = value_of(pods_of(2)[0]);
  Say("   The next run (graintune numbers it attempt 2): 8 pods, each with grain_worker_count=" + second +
      (second == std::to_string(next_run) ? " (status.nextRun)" : " (status.nextRun said " + std::to_string(next_run) + ")"));
  Say("     " + pods_of(2)[0]["metadata"]["annotations"].value("graintune.dev/reason", ""));
  WaitFor([&] { return trial_of(2).contains("samples"); }, 120);
  say_trial(2);
  const bool fed = trial_of(2).contains("samples") && !trial_of(2).value("dataBound", true);

  Say("\n   $ kubectl get graintunings");
  Say(Indent(Text(cp.Kubectl({"get", "graintunings"}))));
  Say("\n   $ kubectl get events.events.k8s.io --field-selector regarding.kind=JobSet");
  Say(Indent(Text(cp.Kubectl({"get", "events.events.k8s.io", "--field-selector", "regarding.kind=JobSet",
                              "-o", "custom-columns=REASON:.reason,NOTE:.note"}))));
  if (Interrupted()) return 130;
  if (kept != first || !fed) {
    Say("\nThe story did not end as it should (logs in " + cp.dir() + ").");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bin_dir, source_dir, build_dir, scrape_targets, trainer = "emulator";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    if (f == "--bin-dir") bin_dir = argv[i + 1];
    else if (f == "--source-dir") source_dir = argv[i + 1];
    else if (f == "--build-dir") build_dir = argv[i + 1];
    else if (f == "--scrape-targets") scrape_targets = argv[i + 1];
    else if (f == "--trainer") trainer = argv[i + 1];
  }
  if (bin_dir.empty() || source_dir.empty() || build_dir.empty() ||
      (trainer != "emulator" && trainer != "maxtext")) {
    std::cerr << "usage: graintune-demo --bin-dir DIR --source-dir DIR --build-dir DIR "
                 "[--trainer emulator|maxtext] [--scrape-targets FILE]\n";
    return 2;
  }
  std::optional<MaxTextEnv> maxtext;
  if (trainer == "maxtext" && !(maxtext = MaxTextFromEnvironment())) {
    std::cerr << "graintune-demo: --trainer maxtext needs the GRAINTUNE_MAXTEXT_* variables "
                 "(run it as: bash scripts/demo.sh --trainer maxtext)\n";
    return 2;
  }
  StopOnSignals();

  Step("1. A local control plane with KWOK TPU nodes");
  ControlPlaneOptions o;
  o.bin_dir = bin_dir;
  o.crd_files = {bin_dir + "/../crds/jobset.x-k8s.io_jobsets.yaml",
                 source_dir + "/crds/graintune.dev_graintunepolicies.yaml",
                 source_dir + "/crds/graintune.dev_graintunings.yaml"};
  o.controllers = o.kwok = o.jobset = true;
  o.kwok_stages_file = source_dir + "/tests/controlplane/kwok-stages.yaml";
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(o);
  if (!started.ok()) {
    std::cerr << "graintune-demo: " << started.error() << "\n";
    return 1;
  }
  ControlPlane& cp = **started;
  Say("   etcd, kube-apiserver, controller-manager, scheduler, JobSet controller and KWOK on "
      "127.0.0.1 (" + cp.admin_config().server + ")");
  if (maxtext) {
    // One host with this machine's cores and memory: graintune's budget is what MaxText has.
    const double cpus = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
    const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    Result<Json> node = MaxTextHost("gke-tpu-v6e-here", cpus, memory);
    cp.AdminClient()->Create(kube::resources::kNodes, "", *node);
  } else {
    for (int i = 0; i < 8; ++i) {
      Result<Json> node = TpuNode({.name = "gke-tpu-v6e-" + std::to_string(i)});
      cp.AdminClient()->Create(kube::resources::kNodes, "", *node);
    }
  }
  Say(Indent(Text(cp.Kubectl({"get", "nodes", "-L", "node.kubernetes.io/instance-type", "-L",
                              "cloud.google.com/gke-tpu-topology"}))));

  Step("2. graintune, installed from its Helm chart (local mode)");
  Result<std::unique_ptr<WebhookUnderTest>> webhook = WebhookUnderTest::Start(
      cp, {.binary = build_dir + "/webhook/graintune-webhook", .register_configuration = false});
  if (!webhook.ok()) {
    std::cerr << "graintune-demo: " << webhook.error() << "\n";
    return 1;
  }
  const std::string helm = "HELM_CACHE_HOME=" + cp.dir() + "/helm HELM_CONFIG_HOME=" + cp.dir() +
                           "/helm HELM_DATA_HOME=" + cp.dir() + "/helm " + bin_dir + "/helm";
  const std::string rendered = cp.dir() + "/graintune-chart.yaml";
  const std::string render = helm + " template graintune " + source_dir + "/charts/graintune" +
      " -n graintune-system --set localDev.enabled=true --set localDev.webhookURL=https://127.0.0.1:" +
      std::to_string((*webhook)->port()) + " --set localDev.caBundle=" +
      Base64Encode((*webhook)->ca_pem()) + " > " + rendered + " 2>/dev/null";
  if (std::system(render.c_str()) != 0) {
    std::cerr << "graintune-demo: helm template failed\n";
    return 1;
  }
  Say(Indent(Text(cp.Kubectl({"apply", "-f", rendered}))));
  ChildProcess op;
  const int op_port = FreeLoopbackPort().ok() ? *FreeLoopbackPort() : 18081;
  if (auto p = ChildProcess::Spawn({build_dir + "/operator/graintune-operator", "--kubeconfig",
                                    cp.kubeconfig_path(), "--resync-period-ms", "500", "--status-progress-interval-ms", "1000",
                                    "--bind-address", "127.0.0.1", "--port", std::to_string(op_port),
                                    "--leader-elect=false"},
                                   cp.dir() + "/operator.log");
      p.ok())
    op = std::move(p).value();
  Say("   graintune-webhook and graintune-operator are running (logs in " + cp.dir() + ")");
  if (!scrape_targets.empty()) {
    const Json targets = Json::array(
        {{{"targets", {"127.0.0.1:" + std::to_string((*webhook)->health_port())}}, {"labels", {{"job", "graintune-webhook"}}}},
         {{"targets", {"127.0.0.1:" + std::to_string(op_port)}}, {"labels", {{"job", "graintune-operator"}}}}});
    if (Status s = WriteFile(scrape_targets, targets.dump()); !s.ok()) {
      std::cerr << "graintune-demo: " << s.message() << "\n";
      return 1;
    }
  }
  Result<LappedPods> lapped = EmulatedLapPods(cp, build_dir);
  if (!lapped.ok()) {
    std::cerr << "graintune-demo: " << lapped.error() << "\n";
    return 1;
  }
  PodRunner runner(cp, maxtext ? PodRunnerOptions{.exporter_binary = build_dir + "/exporter/graintune-exporter",
                                                  .own_trainer = MaxTextTrainer(*maxtext),
                                                  .ns = kMaxTextDemoNamespace}
                              : PodRunnerOptions{.exporter_binary = build_dir + "/exporter/graintune-exporter",
                                                 .trainer_binary = build_dir + "/tests/emulator/trainer_emulator",
                                                 .time_scale = 0.05, .steps = 40, .lapped = *lapped});
  runner.Start();

  const StandInMaxTextPods maxtext_pods(cp, runner);
  // MaxText asked for more steps than the story reads: frozen after kTinySteps lines, failed, and
  // resumed from its last checkpoint with steps still to train.
  int told = maxtext ? TellMaxTextStory(cp, maxtext_pods, *maxtext, 2 * kTinySteps - 4)
                     : TellLlamaStory(cp, runner, source_dir);
  // With the emulator, the story ends with a practice lap (one host: what this machine's cores can
  // really run of a lap's workers).
  if (!maxtext && told == 0) {
    Result<std::string> example = kube::ReadFileText(source_dir + "/examples/llama3-8b-v6e-32-jobset.yaml");
    told = example.ok() ? TellEmulatedLapStory(cp, runner, *example, 7) : Stop(example.error());
  }
  if (told == 0) Say("\nDone: stopping everything this demo started.");
  runner.Stop();
  return told;
}
