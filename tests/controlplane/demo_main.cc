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

#include "kube/base64.h"
#include "kube/config.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/demo_emulated_lap.h"
#include "tests/controlplane/demo_maxtext_story.h"
#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/failure_logs.h"
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
// value the first one measured. Each step is a method; Tell() runs them and gives the exit code,
// as TellMaxTextStory's.
class LlamaStory {
 public:
  LlamaStory(ControlPlane& cp, PodRunner& runner, std::string manifest)
      : cp_(cp), runner_(runner), manifest_(std::move(manifest)) {}

  int Tell() {
    if (!ApplyStarvedRun()) return Stop("The pods of attempt 0 did not start");
    if (!MeasureAttempt0()) return Stop("The operator did not measure attempt 0");
    const std::optional<std::string> kept = RestartKeepsTheValue();
    if (!kept) return Stop("JobSet did not restart the slice");
    const std::optional<bool> fed = NextRunStartsMeasured();
    if (!fed) return Stop("The next run did not start");
    SayTuningsAndEvents();
    if (Interrupted()) return 130;
    if (*kept != first_ || !*fed) {
      Say("\nThe story did not end as it should (logs in " + cp_.dir() + ").");
      return 1;
    }
    return 0;
  }

 private:
  // The pods of the newest attempt numbered `attempt` by graintune (a new run continues the count).
  std::vector<Json> PodsOf(int attempt) const {
    kube::ListOptions lo;
    lo.label_selector = "jobset.sigs.k8s.io/jobset-name=llama3-8b-v6e-32";
    auto r = cp_.AdminClient()->List(kube::resources::kPods, "default", lo);
    std::vector<Json> out;
    if (!r.ok()) return out;
    for (const Json& p : r->items)
      if (p["metadata"].value("annotations", Json::object()).value("graintune.dev/attempt", "") == std::to_string(attempt) &&
          !p["metadata"].contains("deletionTimestamp"))
        out.push_back(p);
    return out;
  }
  Json Tuning() const {
    auto r = cp_.AdminClient()->Get(kube::resources::kGrainTunings, "default", "llama3-8b-v6e-32");
    return r.ok() ? *r : Json();
  }
  Json TrialOf(int attempt) const {
    for (const Json& t : Tuning()["status"].value("trials", Json::array()))
      if (t.value("attempt", -1) == attempt) return t;
    return Json::object();
  }
  // Prints the trial of `attempt` as the GrainTuning holds it.
  void SayTrial(int attempt) const {
    const Json tr = TrialOf(attempt);
    Say("   trial: attempt " + std::to_string(attempt) + ", " + std::to_string(tr.value("workers", 0)) +
        " workers, steady step " + std::to_string(tr.value("stepTimeMeanSeconds", 0.0)).substr(0, 5) +
        " s (mean), " + std::to_string(tr.value("tflopsPerDevice", 0.0)).substr(0, 5) +
        " TFLOP/s per chip, data-bound: " + (tr.value("dataBound", false) ? "yes" : "no"));
  }
  static std::string ValueOf(const Json& pod) {
    return pod["metadata"]["annotations"].value("graintune.dev/worker-count", "");
  }
  void FailAttempt(int attempt) {
    for (const Json& p : PodsOf(attempt))
      cp_.Kubectl({"annotate", "pod", p["metadata"]["name"], "graintune.dev/test-terminate=Error"});
  }

  // 3. The example, with a rate annotation that starves its first run; false: no pods started.
  bool ApplyStarvedRun() {
    Step("3. Llama3-8B on v6e-32 with grain_worker_count=-1 (a deliberately starved start)");
    // The dataset annotation overstates what a worker delivers ~7x (as if the data were
    // pre-tokenized), so even sized for a run that keeps its value (x1.4, 60% MFU) the first run
    // starts with too few workers, like the measured 4-worker run.
    manifest_.replace(manifest_.find("graintune.dev/dataset: c4-en-raw"), 32,
                      "graintune.dev/dataset: c4-en-raw\n    graintune.dev/tokens-per-second-per-worker: \"16000\"");
    for (size_t p = manifest_.find("hostNetwork: true"); p != std::string::npos; p = manifest_.find("hostNetwork: true"))
      manifest_.replace(p, 17, "hostNetwork: false");  // KWOK gives host-network pods one shared address
    Say("   $ kubectl apply -f examples/llama3-8b-v6e-32-jobset.yaml");
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, manifest_))));
    auto js = cp_.AdminClient()->Get(kube::resources::kJobSets, "default", "llama3-8b-v6e-32");
    const Json ann = js.ok() ? (*js)["metadata"].value("annotations", Json::object()) : Json::object();
    Say("   MaxText checkpoints this run (every 500 steps, with Grain's iterator), so the whole run keeps");
    Say("   one value; graintune annotated the JobSet with it:");
    Say("     graintune.dev/first-attempt-worker-count: " + ann.value("graintune.dev/first-attempt-worker-count", ""));
    Say("     graintune.dev/reason: " + ann.value("graintune.dev/reason", ""));
    if (!WaitFor([&] { return PodsOf(0).size() == 8 && runner_.Started().size() >= 8; }, 90)) return false;
    const Json pod0 = PodsOf(0)[0];
    first_ = ValueOf(pod0);
    Say("\n   Attempt 0: 8 pods, each with grain_worker_count=" + first_ +
        " in its script and the graintune-exporter sidecar:");
    const std::string script = pod0["spec"]["containers"][0]["command"].back();
    const size_t at = script.find("grain_worker_count=");
    Say("     ..." + script.substr(at > 60 ? at - 60 : 0, 90) + "...");
    return true;
  }

  // 4. The operator's trial of attempt 0 and what it recommends; false: no trial came.
  bool MeasureAttempt0() {
    Step("4. The operator measures attempt 0");
    if (!WaitFor([&] { return TrialOf(0).contains("samples") && Tuning()["status"].contains("nextRun"); }, 120))
      return false;
    WaitFor([&] { return Tuning()["status"]["recommendation"].value("attempt", 0) == 1; }, 30);
    SayTrial(0);
    const Json g = Tuning();
    Say("   recommendation for attempt 1: " + std::to_string(g["status"]["recommendation"].value("workers", 0)) +
        " workers; for the next run: " + std::to_string(g["status"]["nextRun"].value("workers", 0)));
    Say("     " + g["status"]["recommendation"].value("reason", ""));
    return true;
  }

  // 5. A restart of the slice; the value attempt 1 got (nullopt: no restart).
  std::optional<std::string> RestartKeepsTheValue() {
    Step("5. Attempt 0 fails; JobSet restarts the slice, which resumes from its checkpoint");
    FailAttempt(0);
    if (!WaitFor([&] { return PodsOf(1).size() == 8; }, 90)) return std::nullopt;
    const std::string kept = ValueOf(PodsOf(1)[0]);
    Say("   Attempt 1: 8 new pods, each with grain_worker_count=" + kept +
        (kept == first_ ? " (the run's value: a resume with another count would stop MaxText early, exit 0)"
                        : " (NOT the run's value " + first_ + ")"));
    WaitFor([&] { return Tuning()["status"].value("pinnedAttempt", -1) == 1; }, 60);
    for (const Json& c : Tuning()["status"].value("conditions", Json::array()))
      if (c.value("type", "") == "ValuePinned") Say("   condition ValuePinned=" + c.value("status", "") + ": " + c.value("message", ""));
    return kept;
  }

  // 6. The run ends and the next one starts with status.nextRun; whether it ran fed (nullopt: it
  // did not start).
  std::optional<bool> NextRunStartsMeasured() {
    Step("6. The run ends; the next run of the workload (a new run_name) starts with what it measured");
    WaitFor([&] { return TrialOf(1).contains("samples"); }, 120);
    FailAttempt(1);
    cp_.Kubectl({"delete", "jobset", "llama3-8b-v6e-32", "--wait=false"});
    if (!WaitFor([&] {
          const Json e = Tuning()["status"].value("endedAttempts", Json::array());
          return e.size() >= 2 && PodsOf(1).empty();
        }, 90))
      return std::nullopt;
    // status.nextRun once attempt 1 has ended: its last steps are in it, as they are in what the
    // webhook admits the next run with.
    const int next_run = Tuning()["status"]["nextRun"].value("workers", 0);
    std::string run2 = manifest_;
    const size_t run_name = run2.find("run_name=llama3-8b-v6e-32 ");
    if (run_name == std::string::npos) return std::nullopt;
    run2.replace(run_name, 26, "run_name=llama3-8b-v6e-32-run2 ");
    Say("   $ kubectl apply -f llama3-8b-v6e-32-run2.yaml   # the same JobSet, run_name=llama3-8b-v6e-32-run2");
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, run2))));
    if (!WaitFor([&] { return PodsOf(2).size() == 8; }, 90)) return std::nullopt;
    const std::string second = ValueOf(PodsOf(2)[0]);
    Say("   The next run: 8 pods, each with grain_worker_count=" + second +
        (second == std::to_string(next_run) ? " (status.nextRun)" : " (status.nextRun said " + std::to_string(next_run) + ")"));
    Say("   Its pods count from 0 (JobSet's restart-attempt " +
        PodsOf(2)[0]["metadata"]["labels"].value("jobset.sigs.k8s.io/restart-attempt", "?") +
        "): this is the new run's attempt 0. The GrainTuning keeps the first run's attempts 0 and 1\n"
        "   in its history and files this one after them, as attempt 2.");
    Say("     " + PodsOf(2)[0]["metadata"]["annotations"].value("graintune.dev/reason", ""));
    WaitFor([&] { return TrialOf(2).contains("samples"); }, 120);
    SayTrial(2);
    return TrialOf(2).contains("samples") && !TrialOf(2).value("dataBound", true);
  }

  void SayTuningsAndEvents() {
    Say("\n   $ kubectl get graintunings");
    Say(Indent(Text(cp_.Kubectl({"get", "graintunings"}))));
    Say("\n   $ kubectl get events.events.k8s.io --field-selector regarding.kind=JobSet");
    Say(Indent(Text(cp_.Kubectl({"get", "events.events.k8s.io", "--field-selector", "regarding.kind=JobSet",
                                 "-o", "custom-columns=REASON:.reason,NOTE:.note"}))));
  }

  ControlPlane& cp_;
  PodRunner& runner_;
  std::string manifest_;
  std::string first_;  // attempt 0's value
};

struct DemoArgs {
  std::string bin_dir, source_dir, build_dir, scrape_targets, trainer = "emulator";
};

std::optional<DemoArgs> ParseArgs(int argc, char** argv) {
  DemoArgs a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    if (f == "--bin-dir") a.bin_dir = argv[i + 1];
    else if (f == "--source-dir") a.source_dir = argv[i + 1];
    else if (f == "--build-dir") a.build_dir = argv[i + 1];
    else if (f == "--scrape-targets") a.scrape_targets = argv[i + 1];
    else if (f == "--trainer") a.trainer = argv[i + 1];
  }
  if (a.bin_dir.empty() || a.source_dir.empty() || a.build_dir.empty() ||
      (a.trainer != "emulator" && a.trainer != "maxtext"))
    return std::nullopt;
  return a;
}

// 1. The control plane and its TPU hosts: 8 KWOK v6e hosts, or with MaxText one host shaped
// like this machine (graintune's budget is then what MaxText has).
Result<std::unique_ptr<ControlPlane>> StartControlPlane(const DemoArgs& args, bool maxtext) {
  Step("1. A local control plane with KWOK TPU nodes");
  ControlPlaneOptions o;
  o.bin_dir = args.bin_dir;
  o.crd_files = {args.bin_dir + "/../crds/jobset.x-k8s.io_jobsets.yaml",
                 args.source_dir + "/crds/graintune.dev_graintunepolicies.yaml",
                 args.source_dir + "/crds/graintune.dev_graintunings.yaml"};
  o.controllers = o.kwok = o.jobset = true;
  o.kwok_stages_file = args.source_dir + "/tests/controlplane/kwok-stages.yaml";
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(o);
  if (!started.ok()) return started;
  ControlPlane& cp = **started;
  Say("   etcd, kube-apiserver, controller-manager, scheduler, JobSet controller and KWOK on "
      "127.0.0.1 (" + cp.admin_config().server + ")");
  if (maxtext) {
    const double cpus = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
    const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    Result<Json> node = MaxTextHost("gke-tpu-v6e-here", cpus, memory);
    if (node.ok()) cp.AdminClient()->Create(kube::resources::kNodes, "", *node);
  } else {
    for (int i = 0; i < 8; ++i) {
      Result<Json> node = TpuNode({.name = "gke-tpu-v6e-" + std::to_string(i)});
      if (node.ok()) cp.AdminClient()->Create(kube::resources::kNodes, "", *node);
    }
  }
  Say(Indent(Text(cp.Kubectl({"get", "nodes", "-L", "node.kubernetes.io/instance-type", "-L",
                              "cloud.google.com/gke-tpu-topology"}))));
  return started;
}

// graintune's webhook and operator, running here; the chart's objects point at them.
struct Graintune {
  std::unique_ptr<WebhookUnderTest> webhook;
  ChildProcess op;
  int op_port = 0;
};

// 2. The chart rendered in local mode and applied, the webhook and operator started, and their
// /metrics addresses written to args.scrape_targets when asked.
Result<Graintune> InstallGraintune(ControlPlane& cp, const DemoArgs& args) {
  Step("2. graintune, installed from its Helm chart (local mode)");
  Graintune g;
  Result<std::unique_ptr<WebhookUnderTest>> webhook = WebhookUnderTest::Start(
      cp, {.binary = args.build_dir + "/webhook/graintune-webhook", .register_configuration = false});
  if (!webhook.ok()) return webhook.status();
  g.webhook = std::move(webhook).value();
  const std::string helm = "HELM_CACHE_HOME=" + cp.dir() + "/helm HELM_CONFIG_HOME=" + cp.dir() +
                           "/helm HELM_DATA_HOME=" + cp.dir() + "/helm " + args.bin_dir + "/helm";
  const std::string rendered = cp.dir() + "/graintune-chart.yaml";
  const std::string render = helm + " template graintune " + args.source_dir + "/charts/graintune" +
      " -n graintune-system --set localDev.enabled=true --set localDev.webhookURL=https://127.0.0.1:" +
      std::to_string(g.webhook->port()) + " --set localDev.caBundle=" + kube::Base64Encode(g.webhook->ca_pem()) +
      " > " + rendered + " 2>/dev/null";
  if (std::system(render.c_str()) != 0) return Status::Error("helm template failed");
  Say(Indent(Text(cp.Kubectl({"apply", "-f", rendered}))));
  g.op_port = FreeLoopbackPort().ok() ? *FreeLoopbackPort() : 18081;
  Result<ChildProcess> op = ChildProcess::Spawn(
      {args.build_dir + "/operator/graintune-operator", "--kubeconfig", cp.kubeconfig_path(), "--resync-period-ms",
       "500", "--status-progress-interval-ms", "1000", "--bind-address", "127.0.0.1", "--port",
       std::to_string(g.op_port), "--leader-elect=false"},
      cp.dir() + "/operator.log");
  if (!op.ok()) return op.status();
  g.op = std::move(op).value();
  Say("   graintune-webhook and graintune-operator are running (logs in " + cp.dir() + ")");
  if (args.scrape_targets.empty()) return g;
  const Json targets = Json::array(
      {{{"targets", {"127.0.0.1:" + std::to_string(g.webhook->health_port())}}, {"labels", {{"job", "graintune-webhook"}}}},
       {{"targets", {"127.0.0.1:" + std::to_string(g.op_port)}}, {"labels", {{"job", "graintune-operator"}}}}});
  if (Status s = WriteFile(args.scrape_targets, targets.dump()); !s.ok()) return s;
  return g;
}

// Steps 3 on with the emulator: the Llama3-8B story, then the practice lap on one more host.
int TellEmulatorStories(ControlPlane& cp, PodRunner& runner, const std::string& source_dir) {
  Result<std::string> example = kube::ReadFileText(source_dir + "/examples/llama3-8b-v6e-32-jobset.yaml");
  if (!example.ok()) return Stop(example.error());
  const int told = LlamaStory(cp, runner, *example).Tell();
  // One host: what this machine's cores can really run of a lap's workers.
  return told == 0 ? TellEmulatedLapStory(cp, runner, *example, 7) : told;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<DemoArgs> args = ParseArgs(argc, argv);
  if (!args) {
    std::cerr << "usage: graintune-demo --bin-dir DIR --source-dir DIR --build-dir DIR "
                 "[--trainer emulator|maxtext] [--scrape-targets FILE]\n";
    return 2;
  }
  std::optional<MaxTextEnv> maxtext;
  if (args->trainer == "maxtext" && !(maxtext = MaxTextFromEnvironment())) {
    std::cerr << "graintune-demo: --trainer maxtext needs the GRAINTUNE_MAXTEXT_* variables "
                 "(run it as: bash scripts/demo.sh --trainer maxtext)\n";
    return 2;
  }
  StopOnSignals();
  Result<std::unique_ptr<ControlPlane>> started = StartControlPlane(*args, maxtext.has_value());
  if (!started.ok()) {
    std::cerr << "graintune-demo: " << started.error() << "\n";
    return 1;
  }
  ControlPlane& cp = **started;
  Result<Graintune> graintune = InstallGraintune(cp, *args);
  Result<LappedPods> lapped = graintune.ok() ? EmulatedLapPods(cp, args->build_dir) : graintune.status();
  if (!lapped.ok()) {
    std::cerr << "graintune-demo: " << lapped.error() << "\n";
    return 1;
  }
  const std::string exporter = args->build_dir + "/exporter/graintune-exporter";
  PodRunner runner(cp, maxtext ? PodRunnerOptions{.exporter_binary = exporter,
                                                  .own_trainer = MaxTextTrainer(*maxtext),
                                                  .launcher_binary = args->build_dir + "/launcher/graintune-launcher",
                                                  .ns = kMaxTextDemoNamespace}
                              : PodRunnerOptions{.exporter_binary = exporter,
                                                 .trainer_binary = args->build_dir + "/tests/emulator/trainer_emulator",
                                                 .time_scale = 0.05, .steps = 40, .lapped = *lapped});
  runner.Start();
  const StandInMaxTextPods maxtext_pods(cp, runner);
  // MaxText asked for more steps than the story reads: frozen after kTinySteps lines, failed, and
  // resumed from its last checkpoint with steps still to train.
  const int told = maxtext ? TellMaxTextStory(cp, maxtext_pods, *maxtext, 2 * kTinySteps - 4)
                           : TellEmulatorStories(cp, runner, args->source_dir);
  if (told == 0) Say("\nDone: stopping everything this demo started.");
  runner.Stop();
  if (told != 0 && told != 130) SaveLogsOfFailure(cp, maxtext ? "graintune-demo-maxtext" : "graintune-demo");
  return told;
}
