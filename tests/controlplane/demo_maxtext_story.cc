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

std::string Fixed(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

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
    Say("   inside xpk's `bash -c` wrapper; its records are 512 KiB of text, so tokenizing binds:");
    Result<TinyJobSetOptions> placed =
        pods_.Place({.ns = kMaxTextDemoNamespace, .name = kJobSet, .steps = steps_});
    if (!placed.ok()) return Stop(placed.error());
    Say(Indent(Text(cp_.Kubectl({"apply", "-f", "-"}, TinyMaxTextJobSet(maxtext_, *placed)))));

    Step("4. Attempt 0: MaxText runs graintune's value");
    bool lifted = false;
    std::optional<AttemptRun> a0 = RunAttempt(0, [&] {
      Say("   The cap is lifted while it runs: the trial, not the policy, decides attempt 1.");
      lifted = cp_.Kubectl({"apply", "-f", "-"}, NamespacePolicy(kMaxTextDemoNamespace, 64)).ok();
    });
    if (!lifted) return Stop("lifting the namespace's cap");
    if (!a0) return Stop("attempt 0 did not run to its end");
    std::optional<int> recommended = WaitForTrial(0, *a0);
    if (!recommended) return Stop("the operator did not record attempt 0's trial");

    Step("5. Attempt 0 fails; JobSet restarts the slice");
    Result<std::string> failed = pods_.Fail(a0->pod_object, a0->trainer);
    if (!failed.ok()) return Stop("failing attempt 0: " + failed.error());
    Say("   (" + *failed + ")");
    std::optional<AttemptRun> a1 = RunAttempt(1, [] {});
    if (!a1) return Stop("attempt 1 did not run to its end");
    if (a1->workers != *recommended)
      return Stop("attempt 1 runs " + std::to_string(a1->workers) + " workers, not the recommended " +
                  std::to_string(*recommended));

    Step("6. The operator measures attempt 1");
    if (!WaitForTrial(1, *a1)) return Stop("the operator did not record attempt 1's trial");
    Say("\n   $ kubectl get graintunings -n " + std::string(kMaxTextDemoNamespace));
    Say(Indent(Text(cp_.Kubectl({"get", "graintunings", "-n", kMaxTextDemoNamespace}))));
    Say("\n   Steady steps per second: attempt 0 with " + std::to_string(a0->workers) + " worker(s) " +
        Fixed(1 / a0->whole.step_seconds_mean, 3) + ", attempt 1 with " + std::to_string(a1->workers) + " " +
        Fixed(1 / a1->whole.step_seconds_mean, 3) + " (x" +
        Fixed(a0->whole.step_seconds_mean / a1->whole.step_seconds_mean, 2) + ").");
    Say("\nDone: stopping everything this demo started.");
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
  std::optional<AttemptRun> RunAttempt(int attempt, const std::function<void()>& once_started) {
    AttemptRun run;
    int shell = 0;
    Json pod;
    if (!WaitFor([&] {
          const std::vector<Json> pods = AttemptPods(cp_, kMaxTextDemoNamespace, kJobSet, attempt);
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
        std::to_string(run.metrics.malformed.size()) + " unreadable: step 0 (compile) " + Fixed(s.front(), 1) +
        " s, then " + Fixed(*std::min_element(s.begin() + 1, s.end()), 2) + "-" +
        Fixed(*std::max_element(s.begin() + 1, s.end()), 2) + " s per step.");
    for (const std::string& m : run.metrics.malformed) Say("     unreadable: " + m);
    return run;
  }

  // Waits until the GrainTuning holds `attempt`'s whole trial and the recommendation made from
  // it, says both, and returns the recommended workers.
  std::optional<int> WaitForTrial(int attempt, const AttemptRun& run) {
    const std::string trial_at = "/status/trials/" + std::to_string(attempt);
    Json g;
    if (!WaitFor([&] {
          g = Tuning();
          return g.value(Json::json_pointer(trial_at + "/samples"), 0) == run.whole.samples &&
                 g.value("/status/recommendation/attempt"_json_pointer, 0) == attempt + 1;
        }, 60)) {
      Say(Indent(Text(cp_.Kubectl({"get", "graintuning", "-n", kMaxTextDemoNamespace, kJobSet, "-o", "yaml"}))));
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
