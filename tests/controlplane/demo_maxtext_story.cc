#include "tests/controlplane/demo_maxtext_story.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include <signal.h>

#include "tests/controlplane/demo_output.h"
#include "tests/controlplane/process_tree.h"
#include "tuner/trial.h"

namespace graintune::testing::demo {
namespace {

using kube::Json;

constexpr char kJobSet[] = "tiny";
constexpr char kSecondRun[] = "tiny-run2";

// What one attempt did on this machine, seen from /proc and MaxText's own file.
struct AttemptRun {
  Json pod_object;
  int trainer = 0;            // MaxText's process, while it ran
  std::string pod, command;
  int workers = -1;           // the pod's graintune.dev/worker-count
  int grain_processes = -1;   // the most Grain worker processes counted while MaxText trained
  MetricsFileRead metrics;
  Trial whole;                // SummarizeSteps over the whole file, as the operator judges
};

class Story {
 public:
  Story(ControlPlane& cp, const MaxTextPods& pods, const MaxTextEnv& maxtext, int steps)
      : cp_(cp), pods_(pods), maxtext_(maxtext), steps_(steps) {}

  int Tell() {
    Step("3. A tiny model in MaxText's own trainer, grain_worker_count=-1 (a deliberately starved start)");
    if (!cp_.Kubectl({"create", "namespace", kMaxTextDemoNamespace}).ok()) return Stop("creating the namespace");
    Say("   The platform team's policy caps this namespace at 1 Grain worker for now:");
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, NamespacePolicy(kMaxTextDemoNamespace, 1)))));
    Say("   A one-host JobSet runs `python3 -m maxtext.trainers.pre_train.train ... grain_worker_count=-1`");
    Say("   inside xpk's `bash -c` wrapper, checkpointing every 5 steps (with Grain's iterator); its");
    Say("   records are 512 KiB of text, so tokenizing binds:");
    Result<TinyJobSetOptions> placed = pods_.Place({.ns = kMaxTextDemoNamespace, .name = kJobSet, .steps = steps_,
                                                    .extra_args = kTinyCheckpointing});
    if (!placed.ok()) return Stop(placed.error());
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, TinyMaxTextJobSet(maxtext_, *placed)))));

    Step("4. Attempt 0: MaxText runs graintune's value");
    bool lifted = false;
    std::optional<AttemptRun> a0 = RunAttempt(kJobSet, 0, [&] {
      Say("   The cap is lifted while it runs: what the run measures, not the policy, decides the next one.");
      lifted = cp_.Kubectl({"apply", "-f", "-"}, NamespacePolicy(kMaxTextDemoNamespace, 64)).ok();
    });
    if (!lifted) return Stop("lifting the namespace's cap");
    if (!a0) return Stop("attempt 0 did not run");
    std::optional<int> recommended = WaitForTrial(kJobSet, 0, *a0);
    if (!recommended) return Stop("the operator did not record attempt 0's trial");

    Step("5. Attempt 0 fails; JobSet restarts the slice, which resumes from its checkpoint");
    Result<std::string> failed = pods_.Fail(a0->pod_object, a0->trainer);
    if (!failed.ok()) return Stop("failing attempt 0: " + failed.error());
    Say("   (" + *failed + ")");
    std::optional<AttemptRun> a1 = RunAttempt(kJobSet, 1, [] {});
    if (!a1) return Stop("attempt 1 did not run");
    if (a1->workers != a0->workers)
      return Stop("attempt 1 runs " + std::to_string(a1->workers) + " workers, not its run's " +
                  std::to_string(a0->workers));
    const std::string log = pods_.LogTail(a1->pod_object);
    const size_t restored = log.find("restoring from this run's directory step ");
    Say("   MaxText resumed: its first metrics line is step " + std::to_string(a1->metrics.first_step) +
        " (after the checkpoint attempt 0 saved at step " + std::to_string(a1->metrics.first_step - 1) + ")" +
        (restored == std::string::npos ? std::string()
                                       : "; it logged \"" + log.substr(restored, log.find('\n', restored) - restored) + "\"") +
        (log.find("Training stopped") == std::string::npos ? "; no \"Training stopped\"" : "; it logged \"Training stopped\"") + ".");
    const Json pinned = Tuning();
    Say("   " + pinned["status"]["recommendation"].value("reason", ""));

    Step("6. The next run of the workload (a new run_name) starts with what the first measured");
    const int next_run = pinned["status"]["nextRun"].value("workers", 0);
    cp_.Kubectl({"delete", "jobset", "-n", kMaxTextDemoNamespace, kJobSet, "--wait=true", "--timeout=120s"});
    Result<TinyJobSetOptions> second = pods_.Place({.ns = kMaxTextDemoNamespace, .name = kSecondRun,
                                                    .steps = steps_, .extra_args = kTinyCheckpointing});
    if (!second.ok()) return Stop(second.error());
    // The same workload (its tuning key), a new run: another checkpoint directory.
    std::string manifest = TinyMaxTextJobSet(maxtext_, *second);
    manifest.replace(manifest.find("metadata: {name: "), 17,
                     "metadata: {annotations: {graintune.dev/tuning-key: " + std::string(kJobSet) + "}, name: ");
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, manifest))));
    std::optional<AttemptRun> r2 = RunAttempt(kSecondRun, 0, [] {});
    if (!r2) return Stop("the next run did not run");
    if (r2->workers != next_run)
      return Stop("the next run runs " + std::to_string(r2->workers) + " workers, not status.nextRun's " +
                  std::to_string(next_run));
    Say("\n   $ kubectl get graintunings -n " + std::string(kMaxTextDemoNamespace));
    Say(Indent(Text(cp_.Kubectl({"get", "graintunings", "-n", kMaxTextDemoNamespace}))));
    Say("\n   Steady steps per second: run 1 (attempt 0) with " + std::to_string(a0->workers) + " worker(s) " +
        Fixed(1 / a0->whole.step_seconds_mean, 3) + ", run 2 with " + std::to_string(r2->workers) + " " +
        Fixed(1 / r2->whole.step_seconds_mean, 3) + " (x" +
        Fixed(a0->whole.step_seconds_mean / r2->whole.step_seconds_mean, 2) + ").");
    return Interrupted() ? 130 : 0;
  }

 private:
  Json Tuning() {
    auto r = cp_.AdminClient()->Get(kube::resources::kGrainTunings, kMaxTextDemoNamespace, kJobSet);
    return r.ok() ? *r : Json::object();
  }

  // Waits for `attempt`'s pod and MaxText in it, counts its Grain worker processes until it
  // ends (or, when it was asked for more, until it wrote kTinySteps steps: then it is stopped
  // where it is), then reads its metrics file. nullopt when a wait ran out (said why) or on Ctrl-C.
  std::optional<AttemptRun> RunAttempt(const std::string& jobset, int attempt,
                                       const std::function<void()>& once_started) {
    AttemptRun run;
    int shell = 0;
    Json pod;
    if (!WaitFor([&] {
          const std::vector<Json> pods = AttemptPods(cp_, kMaxTextDemoNamespace, jobset, attempt);
          if (pods.size() != 1) return false;
          pod = pods[0];
          run.pod = pod["metadata"].value("name", "");
          shell = pods_.ShellPid(pod);
          return shell != 0;
        }, 180)) {
      Say(Indent(Text(cp_.Kubectl({"get", "jobset,jobs,pods", "-n", kMaxTextDemoNamespace, "-o", "wide"}))));
      return std::nullopt;
    }
    run.workers = WorkerCountOf(pod);
    run.command = ScriptOf(pod, "maxtext");
    const size_t at = run.command.find("grain_worker_count=");
    Say("   Attempt " + std::to_string(attempt) + ": pod " + run.pod + ", graintune.dev/worker-count: " +
        std::to_string(run.workers) + "; the command MaxText runs:");
    if (at != std::string::npos) Say("     ..." + run.command.substr(at > 70 ? at - 70 : 0, 100) + "...");
    once_started();
    run.pod_object = pod;
    const std::string file = pods_.MetricsFile(pod);
    const bool runs_on = steps_ > kTinySteps;
    if (!WaitFor([&] {
          const std::map<int, ProcessSeen> tree = Descendants(shell);
          if (const int trainer = TrainerIn(tree, kMaxTextTrainerPattern)) run.trainer = trainer;
          run.grain_processes = std::max(run.grain_processes, GrainWorkers(tree, kMaxTextTrainerPattern));
          if (ProcessEnded(shell)) return true;
          return runs_on && static_cast<int>(ReadMaxTextMetricsFile(file).step_seconds.size()) >= kTinySteps;
        }, 420)) {
      Say(Indent(pods_.LogTail(pod)));
      return std::nullopt;
    }
    // Frozen where it is, MaxText writes no more steps: the file and the trial hold the same.
    if (runs_on && run.trainer != 0 && !ProcessEnded(run.trainer)) ::kill(run.trainer, SIGSTOP);
    run.metrics = ReadMaxTextMetricsFile(file);
    Result<Trial> whole = SummarizeSteps(run.metrics.step_seconds, 1.0, kOperatorWarmupSteps);
    if (!whole.ok()) {
      Say("   " + whole.error() + "\n" + Indent(pods_.LogTail(pod)));
      return std::nullopt;
    }
    run.whole = *whole;
    const std::vector<double>& s = run.metrics.step_seconds;
    Say("   MaxText started " + std::to_string(run.grain_processes) + " Grain worker process(es) (counted in /proc)" +
        " and wrote " + std::to_string(run.metrics.lines) + " metrics lines, " +
        std::to_string(run.metrics.malformed.size()) + " unreadable: step " + std::to_string(run.metrics.first_step) +
        " (compile) " + Fixed(s.front(), 1) +
        " s, then " + Fixed(*std::min_element(s.begin() + 1, s.end()), 2) + "-" +
        Fixed(*std::max_element(s.begin() + 1, s.end()), 2) + " s per step.");
    for (const std::string& m : run.metrics.malformed) Say("     unreadable: " + m);
    return run;
  }

  // Waits until the GrainTuning holds `attempt`'s whole trial and the recommendation made from
  // it, says both, and returns the recommended workers.
  std::optional<int> WaitForTrial(const std::string& jobset, int attempt, const AttemptRun& run) {
    const std::string trial_at = "/status/trials/" + std::to_string(attempt);
    Json g;
    if (!WaitFor([&] {
          g = Tuning();
          return g.value(Json::json_pointer(trial_at + "/samples"), 0) == run.whole.samples &&
                 g.value("/status/recommendation/attempt"_json_pointer, 0) == attempt + 1;
        }, 60)) {
      Say(Indent(Text(cp_.Kubectl({"get", "graintuning", "-n", kMaxTextDemoNamespace, jobset, "-o", "yaml"}))));
      return std::nullopt;
    }
    const Json tr = g.value(Json::json_pointer(trial_at), Json::object());
    Say("   trial: attempt " + std::to_string(attempt) + ", " + std::to_string(tr.value("workers", 0)) +
        " workers, " + std::to_string(tr.value("samples", 0)) + " steady samples, step " +
        Fixed(tr.value("stepTimeMeanSeconds", 0.0), 3) + " s (mean), data-bound: " +
        (tr.value("dataBound", false) ? "yes" : "no"));
    const Json rec = g["status"]["recommendation"];
    Say("   recommendation for attempt " + std::to_string(attempt + 1) + ": " +
        std::to_string(rec.value("workers", 0)) + " workers (" + g["status"].value("phase", "") + ")");
    Say("     " + rec.value("reason", ""));
    return rec.value("workers", -1);
  }

  ControlPlane& cp_;
  const MaxTextPods& pods_;
  const MaxTextEnv& maxtext_;
  const int steps_;
};

}  // namespace

int TellMaxTextStory(ControlPlane& cp, const MaxTextPods& pods, const MaxTextEnv& maxtext, int steps) {
  return Story(cp, pods, maxtext, steps).Tell();
}

}  // namespace graintune::testing::demo
