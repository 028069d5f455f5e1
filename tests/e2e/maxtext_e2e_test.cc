// Real MaxText in the loop (label maxtext): a one-host JobSet runs MaxText's own trainer
// (maxtext 0.2.5 on this machine's CPU, a tiny model, a pipeline that tokenizes 512 KiB
// records, so data loading is the bottleneck) with grain_worker_count=-1. graintune-webhook
// rewrites the command; the stand-in kubelet runs exactly that command through bash with the
// pinned MaxText environment on PATH; MaxText starts the Grain worker processes and its own
// metric logger writes the metrics file; graintune-exporter follows it and reads /proc;
// graintune-operator records the trial; the attempt fails, JobSet restarts it, and the
// restart runs the recommended value.
//
// It asserts what the machine's noise cannot break: the Grain worker processes MaxText started
// (counted from /proc, and as the exporter counted them) are graintune's value; every line
// MaxText wrote parses; the trial's steady samples and data-bound verdict are the ones the
// steps in the file imply; the restarted attempt runs the recommendation.
//
// Needs the GRAINTUNE_MAXTEXT_* variables of scripts/lib/maxtext_trainer.sh (scripts/test.sh
// exports them) and the control plane; it fails, never skips, under GRAINTUNE_REQUIRE_CONTROLPLANE=1.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "kube/config.h"
#include "operator/exporter_scraper.h"
#include "operator/pod_facts.h"
#include "telemetry/step_log.h"
#include "tests/controlplane/maxtext_attempt.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/operator_under_test.h"
#include "tests/controlplane/pod_runner.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"
#include "tuner/trial.h"

namespace graintune::testing {
namespace {

using kube::Json;

constexpr char kNs[] = "maxtext";
constexpr char kJobSet[] = "tiny";

std::optional<Json> Tuning(ControlPlane& cp) {
  auto r = cp.AdminClient()->Get(kube::resources::kGrainTunings, kNs, kJobSet);
  if (!r.ok()) return std::nullopt;
  return *r;
}

class MaxTextE2E : public ::testing::Test {
 protected:
  // Waits for `attempt`'s pod and its trainer, counts the Grain processes while MaxText runs,
  // and reads its metrics file once it has ended.
  // `on_started` runs once the trainer has started.
  void RunAttempt(ControlPlane& cp, PodRunner& runner, int attempt, MaxTextAttemptSeen& seen,
                  const std::function<void()>& on_started = [] {}) {
    std::optional<int> pid;
    Json pod;
    ASSERT_TRUE(WaitFor([&] {
      const std::vector<Json> pods = AttemptPods(cp, kNs, kJobSet, attempt);
      if (pods.size() != 1) return false;
      pod = pods[0];
      seen.pod = pod["metadata"].value("name", "");
      pid = runner.TrainerPid(seen.pod);
      return pid.has_value();
    }, std::chrono::seconds(90))) << Text(cp.Kubectl({"get", "jobset,jobs,pods", "-n", kNs, "-o", "wide"}));
    on_started();
    seen.workers = WorkerCountOf(pod);
    seen.command = ScriptOf(pod, "maxtext");
    const std::string dir = runner.PodDir(seen.pod);
    // The exporter's /steps, read as the operator reads it.
    const op::PodFacts facts = op::PodFactsFromJson(pod);
    auto exporter_steps = [&] { return op::FetchExporterSteps(facts, op::ScraperOptions{}, std::stop_token{}); };
    // MaxText trains for kTinySteps steps and exits; the pod stays Running (KWOK) until failed.
    ASSERT_TRUE(WaitFor([&] {
      seen.most_grain_processes = std::max(seen.most_grain_processes, GrainWorkers(Descendants(*pid), kMaxTextTrainerPattern));
      if (Result<telemetry::StepsDocument> doc = exporter_steps(); doc.ok() && doc->process)
        seen.exporter_workers = std::max(seen.exporter_workers, doc->process->workers);
      return ProcessEnded(*pid);
    }, std::chrono::seconds(420))) << TailOfFile(dir + "/trainer.log");
    std::printf("attempt %d trainer log:\n%s\n", attempt, TailOfFile(dir + "/trainer.log", 1500).c_str());
    const MetricsFileRead file = ReadMaxTextMetricsFile(dir + "/metrics.jsonl");
    seen.lines = file.lines;
    seen.malformed = static_cast<int>(file.malformed.size());
    for (const std::string& m : file.malformed) ADD_FAILURE() << "MaxText wrote a line graintune cannot read: " << m;
    seen.step_seconds = file.step_seconds;
    // The exporter has read the whole file once its /steps holds every step.
    std::string last_answer;
    ASSERT_TRUE(WaitFor([&] {
      Result<telemetry::StepsDocument> doc = exporter_steps();
      last_answer = doc.ok() ? std::to_string(doc->steps.size()) + " steps" : doc.error();
      if (!doc.ok() || doc->steps.size() != seen.step_seconds.size()) return false;
      seen.exporter_malformed = doc->malformed_lines;
      return true;
    }, std::chrono::seconds(30))) << seen.step_seconds.size() << " steps in the file; the exporter's /steps: "
                                  << last_answer << "\n" << TailOfFile(dir + "/exporter.log");
  }
};

TEST_F(MaxTextE2E, RealMaxTextRunsGraintunesValueAndItsRestartRunsTheRecommendation) {
  const std::optional<MaxTextEnv> maxtext = MaxTextFromEnvironment();
  if (!maxtext) {
    const char* req = std::getenv("GRAINTUNE_REQUIRE_CONTROLPLANE");
    if (req && std::string(req) == "1")
      FAIL() << "GRAINTUNE_MAXTEXT_* are not set (scripts/test.sh sets them from scripts/lib/maxtext_trainer.sh)";
    GTEST_SKIP() << "GRAINTUNE_MAXTEXT_* are not set: run scripts/test.sh";
  }
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  // One TPU host shaped like this machine: 2 cores, 16 GiB allocatable.
  Result<Json> node = MaxTextHost("maxtext-host", 2.0, 16.0 * (1 << 30));
  ASSERT_TRUE(node.ok()) << node.error();
  auto created = cp->AdminClient()->Create(kube::resources::kNodes, "", *node);
  ASSERT_TRUE(created.ok() || created.error().IsAlreadyExists()) << created.status().message();
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", kNs}).ok());
  // Attempt 0 starts deliberately low: one Grain worker cannot keep up with this pipeline.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, NamespacePolicy(kNs, 1)).ok());

  auto webhook = WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  auto op = StartOperatorUnderTest(*cp, GRAINTUNE_OPERATOR_BIN, "op-maxtext");
  ASSERT_TRUE(op.ok()) << op.error();
  PodRunner runner(*cp, {.exporter_binary = GRAINTUNE_EXPORTER_BIN,
                         .own_trainer = MaxTextTrainer(*maxtext),
                         .launcher_binary = GRAINTUNE_LAUNCHER_BIN, .ns = kNs});
  runner.Start();
  const std::string out_dir = cp->dir() + "/maxtext-out";
  Result<std::string> applied = cp->Kubectl({"apply", "-f", "-"},
                                          TinyMaxTextJobSet(*maxtext, {.ns = kNs, .name = kJobSet, .out_dir = out_dir}));
  ASSERT_TRUE(applied.ok()) << applied.error();
  auto yaml = [&] { return Text(cp->Kubectl({"get", "graintunings", "-n", kNs, "-o", "yaml"})); };

  // Attempt 0: graintune's value, capped at 1, in the command MaxText runs. Once it runs, the
  // platform lifts the cap: the trial, not the policy, decides attempt 1.
  MaxTextAttemptSeen a0;
  RunAttempt(*cp, runner, 0, a0, [&] { ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, NamespacePolicy(kNs, 64)).ok()); });
  if (HasFatalFailure()) return;
  EXPECT_EQ(a0.workers, 1);
  ExpectRanItsValue(a0);
  EXPECT_GE(static_cast<int>(a0.step_seconds.size()), kTinySteps - 1);

  // The trial the operator stored has every steady sample of the file and a verdict the steps
  // allow; the recommendation written with that final trial is attempt 1's value (MaxText has
  // ended: nothing changes it any more).
  Result<Trial> whole = SummarizeSteps(a0.step_seconds, 1.0, kOperatorWarmupSteps);
  ASSERT_TRUE(whole.ok()) << whole.error();
  Json trial0;
  int recommended = -1;
  ASSERT_TRUE(WaitFor([&] {
    std::optional<Json> gt = Tuning(*cp);
    if (!gt) return false;
    trial0 = gt->value("/status/trials/0"_json_pointer, Json::object());
    const Json rec = gt->value("/status/recommendation"_json_pointer, Json::object());
    recommended = rec.value("workers", -1);
    return trial0.value("samples", 0) == whole->samples && rec.value("attempt", 0) == 1;
  }, std::chrono::seconds(30))) << yaml();
  EXPECT_EQ(trial0.value("workers", 0), a0.workers);
  ExpectTheVerdictTheStepsImply(trial0, *whole);
  EXPECT_NEAR(trial0.value("stepTimeMeanSeconds", 0.0), whole->step_seconds_mean, 0.0006);
  ASSERT_GE(recommended, 0) << yaml();

  // Attempt 0 fails; JobSet restarts the slice; attempt 1 runs the recommendation.
  ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", kNs, a0.pod, "graintune.dev/test-terminate=Error"}).ok());
  MaxTextAttemptSeen a1;
  RunAttempt(*cp, runner, 1, a1);
  if (HasFatalFailure()) return;
  EXPECT_EQ(a1.workers, recommended) << "the restart runs the recommendation";
  ExpectRanItsValue(a1);
  Result<Trial> whole1 = SummarizeSteps(a1.step_seconds, 1.0, kOperatorWarmupSteps);
  ASSERT_TRUE(whole1.ok()) << whole1.error();
  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning(*cp);
    return gt && gt->value("/status/trials/1/samples"_json_pointer, 0) == whole1->samples;
  }, std::chrono::seconds(30))) << yaml();
  EXPECT_EQ(gt->value("/status/trials/1/workers"_json_pointer, -1), a1.workers);
  ExpectTheVerdictTheStepsImply(gt->value("/status/trials/1"_json_pointer, Json::object()), *whole1);
  std::printf("\nattempt 0: %d workers (%d Grain processes counted), attempt 1: %d (%d counted)\n",
              a0.workers, a0.most_grain_processes, a1.workers, a1.most_grain_processes);
  std::printf("$ kubectl get graintuning -n %s %s -o jsonpath={.status}\n%s\n", kNs, kJobSet,
              gt->value("status", Json::object()).dump(2).c_str());
  cp->Kubectl({"delete", "namespace", kNs, "--wait=false"});
  cp->Kubectl({"delete", "graintunepolicy", kNs});
}

}  // namespace
}  // namespace graintune::testing
