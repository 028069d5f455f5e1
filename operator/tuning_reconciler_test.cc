#include "operator/tuning_reconciler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "base/rfc3339.h"
#include "operator/reconcile_fixtures_for_test.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

ReconcileInput Input(std::optional<json> gt, std::vector<PodFacts> pods,
                     std::map<int, telemetry::StepsDocument> steps) {
  ReconcileInput in;
  in.ns = "default";
  in.tuning_key = "llama";
  in.grain_tuning = std::move(gt);
  in.pods = std::move(pods);
  in.steps = std::move(steps);
  in.inputs = SeedInputs();
  in.now = "2026-11-30T06:00:00Z";
  return in;
}

// The progress rule and ended attempts (workload/grain_tuning_status.h) over statuses as stored.
bool ProgressOnlyJson(const json& stored, const json& desired) {
  return workload::ProgressOnly(workload::StatusFromJson(stored), workload::StatusFromJson(desired));
}
bool TrialsDifferJson(const json& stored, const json& desired, const std::set<int>& attempts) {
  return workload::TrialsDiffer(workload::StatusFromJson(stored), workload::StatusFromJson(desired), attempts);
}
std::vector<int> EndedAttemptsJson(const json& status, const std::vector<PodFacts>& pods) {
  return EndedAttempts(workload::StatusFromJson(status), pods);
}

json Stored(const ReconcileOutput& out, json spec = json{{"tuningKey", "llama"}, {"mode", "Auto"}}) {
  return {{"spec", spec}, {"status", out.status}};
}

TEST(TuningReconcilerTest, ADataBoundAttemptJumpsToWhatItsMeasurementImplies) {
  // Before enough steps: created, and the recommendation is what attempt 0 runs with.
  ReconcileOutput first = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {{0, DataBoundSteps(5)}}));
  ASSERT_TRUE(first.object.is_object());
  EXPECT_EQ(first.object["metadata"]["name"], "llama");
  EXPECT_EQ(first.object["spec"]["workload"]["kind"], "JobSet");
  EXPECT_EQ(first.status["recommendation"]["workers"], 4);
  EXPECT_EQ(first.status["recommendation"]["attempt"], 0);
  EXPECT_FALSE(first.status.contains("trials"));

  // 18 steps: the drain is inside the window, so the attempt is judged data-bound ...
  ReconcileOutput second = ReconcileTuning(Input(Stored(first), {Pod(0, 4)}, {{0, DataBoundSteps(18)}}));
  ASSERT_EQ(second.status["trials"].size(), 1u);
  EXPECT_TRUE(second.status["trials"][0]["dataBound"].get<bool>());
  EXPECT_EQ(second.status["lastTrial"]["workers"], 4);
  const int next = second.status["recommendation"]["workers"];
  EXPECT_GE(next, 8) << second.status.dump(2);  // a jump, not +1
  EXPECT_EQ(second.status["recommendation"]["attempt"], 1);
  EXPECT_EQ(second.status["phase"], "Exploring");
  EXPECT_TRUE(second.status_changed);
  ASSERT_FALSE(second.events.empty());
  EXPECT_EQ(second.events[0].reason, "RecommendationChanged");
  EXPECT_GT(second.status.value("learnedTokensPerSecondPerWorker", 0.0), 1500);

  // ... and stays so when the long starved tail alone would no longer show it.
  ReconcileOutput longer = ReconcileTuning(Input(Stored(second), {Pod(0, 4)}, {{0, DataBoundSteps(60)}}));
  EXPECT_GT(longer.status["trials"][0]["samples"].get<int>(), second.status["trials"][0]["samples"].get<int>());
  EXPECT_TRUE(longer.status["trials"][0]["dataBound"].get<bool>());

  // Attempt 1 with that value is fed: converged.
  ReconcileOutput third = ReconcileTuning(Input(Stored(second), {Pod(0, 4, "Failed"), Pod(1, next)},
                                                {{1, FedSteps(30)}}));
  ASSERT_EQ(third.status["trials"].size(), 2u);
  EXPECT_EQ(second.status.value("endedAttempts", json::array()), json::array());  // still running
  EXPECT_EQ(third.status["endedAttempts"], json({0}));  // its pod failed; attempt 1 runs
  EXPECT_FALSE(third.status["trials"][1]["dataBound"].get<bool>());
  EXPECT_EQ(third.status["phase"], "Converged") << third.status.dump(2);
  EXPECT_EQ(third.status["trials"][0]["samples"], second.status["trials"][0]["samples"]);  // kept
  bool converged_event = false;
  for (const auto& e : third.events) converged_event |= e.reason == "Converged";
  EXPECT_TRUE(converged_event);

  // Nothing new: nothing to write, no events.
  ReconcileOutput again = ReconcileTuning(Input(Stored(third), {Pod(0, 4, "Failed"), Pod(1, next)},
                                                {{1, FedSteps(30)}}));
  EXPECT_FALSE(again.status_changed);
  EXPECT_TRUE(again.events.empty());
}

TEST(TuningReconcilerTest, MoreStepsOfARunningAttemptAreProgressOnlyANewVerdictIsNot) {
  ReconcileOutput first = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {{0, FedSteps(5)}}));
  // The first trial appears: not progress, written at once.
  ReconcileOutput trial = ReconcileTuning(Input(Stored(first), {Pod(0, 4)}, {{0, FedSteps(22)}}));
  ASSERT_TRUE(trial.status.contains("trials"));
  EXPECT_FALSE(ProgressOnlyJson(first.status, trial.status));
  // The same attempt a few steps further: more samples, same verdict and value.
  ReconcileOutput more = ReconcileTuning(Input(Stored(trial), {Pod(0, 4)}, {{0, FedSteps(40)}}));
  ASSERT_TRUE(more.status_changed);
  EXPECT_GT(more.status["trials"][0]["samples"].get<int>(), trial.status["trials"][0]["samples"].get<int>());
  EXPECT_EQ(more.status["recommendation"]["workers"], trial.status["recommendation"]["workers"]);
  EXPECT_TRUE(ProgressOnlyJson(trial.status, more.status));
  // Equal statuses are not progress (nothing to write at all).
  EXPECT_FALSE(ProgressOnlyJson(more.status, more.status));
  // The attempt ends: endedAttempts changes, written at once.
  ReconcileOutput ended = ReconcileTuning(Input(Stored(more), {Pod(0, 4, "Failed")}, {{0, FedSteps(40)}}));
  EXPECT_FALSE(ProgressOnlyJson(more.status, ended.status));
  // A verdict that turns (fed -> data-bound) or a value that moves is never progress.
  json turned = more.status;
  turned["trials"][0]["dataBound"] = true;
  turned["lastTrial"]["dataBound"] = true;
  EXPECT_FALSE(ProgressOnlyJson(more.status, turned));
  json moved = more.status;
  moved["recommendation"]["workers"] = more.status["recommendation"]["workers"].get<int>() + 1;
  EXPECT_FALSE(ProgressOnlyJson(more.status, moved));
  json phase = more.status;
  phase["phase"] = "Paused";
  EXPECT_FALSE(ProgressOnlyJson(more.status, phase));
  // A learned rate or a worker memory figure that appears is news (later workloads of the
  // dataset start from it); one that moves is progress.
  json learned = more.status, relearned = more.status;
  learned["learnedTokensPerSecondPerWorker"] = 2000.0;
  relearned["learnedTokensPerSecondPerWorker"] = 2100.0;
  EXPECT_FALSE(ProgressOnlyJson(more.status, learned));
  EXPECT_TRUE(ProgressOnlyJson(learned, relearned));
  json memory = more.status, more_memory = more.status;
  memory["trials"][0]["workerMemoryBytes"] = 3e9;
  more_memory["trials"][0]["workerMemoryBytes"] = 3.2e9;
  EXPECT_FALSE(ProgressOnlyJson(more.status, memory));
  EXPECT_TRUE(ProgressOnlyJson(memory, more_memory));
  // Which attempts' trials moved.
  EXPECT_TRUE(TrialsDifferJson(trial.status, more.status, {0}));
  EXPECT_FALSE(TrialsDifferJson(trial.status, more.status, {1}));
  EXPECT_TRUE(TrialsDifferJson(first.status, trial.status, {0}));  // appeared
  EXPECT_FALSE(TrialsDifferJson(more.status, more.status, {0}));
}

// The GrainTuning a workload's first pods create says what its first pick learned from (the
// webhook's graintune.dev/learned-from on the pods) and the demand key it is looked up by.
TEST(TuningReconcilerTest, ANewGrainTuningNamesItsDemandKeyAndWhatItsFirstPickLearnedFrom) {
  PodFacts pod = Pod(0, 4);
  pod.learned_from = {"team-a/llama-a"};
  ReconcileInput in = Input(std::nullopt, {pod}, {});
  in.inputs->demand.transfer_key = "llama3-8b batch 2 seq 8192, 4x v6e on ct6e-standard-4t, settings 00ff";
  ReconcileOutput out = ReconcileTuning(in);
  ASSERT_TRUE(out.object.is_object());
  EXPECT_EQ(out.object["spec"]["demandKey"], in.inputs->demand.transfer_key);
  EXPECT_EQ(out.object["spec"]["learnedFrom"], json::array({"team-a/llama-a"}));

  ReconcileOutput own = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {}));
  EXPECT_FALSE(own.object["spec"].contains("learnedFrom")) << "nothing learned from others";
  EXPECT_FALSE(own.object["spec"].contains("demandKey")) << "no key: nothing transfers";
}

TEST(TuningReconcilerTest, AnOomKilledAttemptCapsTheValue) {
  ReconcileOutput out = ReconcileTuning(Input(std::nullopt, {Pod(0, 40, "Failed", true)}, {}));
  ASSERT_EQ(out.status["trials"].size(), 1u);
  EXPECT_TRUE(out.status["trials"][0]["oomKilled"].get<bool>());
  EXPECT_LT(out.status["recommendation"]["workers"].get<int>(), 40);
  EXPECT_EQ(out.events[0].reason, "CappedByOOM");
  EXPECT_EQ(out.events[0].type, "Warning");
  bool capped = false;
  for (const json& c : out.status["conditions"]) capped |= c["type"] == "CappedByOOM" && c["status"] == "True";
  EXPECT_TRUE(capped);
}

TEST(TuningReconcilerTest, AStoredTrialIsNotReplacedByAShorterOne) {
  ReconcileOutput full = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {{0, DataBoundSteps(40)}}));
  // The exporter restarted (or a different pod answered): fewer steps than stored.
  ReconcileOutput later = ReconcileTuning(Input(Stored(full), {Pod(0, 4)}, {{0, DataBoundSteps(12)}}));
  EXPECT_EQ(later.status["trials"][0]["samples"], full.status["trials"][0]["samples"]);
  EXPECT_FALSE(later.status_changed);
}

TEST(TuningReconcilerTest, AnAttemptEndsWhenNoneOfItsPodsIsAliveAndStaysEnded) {
  const json status = {{"trials", {{{"attempt", 0}, {"workers", 4}}, {{"attempt", 2}, {"workers", 9}},
                                   {{"attempt", 7}, {"workers", 9}}}},
                       {"endedAttempts", {7, 5}}};  // 5's trial was dropped: so is its mark
  // Attempt 0 still has a running pod (another of its pods is being deleted); attempt 1 has no
  // trial; attempt 2's only pod is being deleted (a Kueue preemption).
  PodFacts leaving = Pod(2, 9);
  leaving.terminating = true;
  PodFacts deleted_too = Pod(0, 4);
  deleted_too.terminating = true;
  EXPECT_EQ(EndedAttemptsJson(status, {Pod(0, 4), deleted_too, Pod(1, 6, "Pending"), leaving}),
            std::vector<int>({2, 7}));
  EXPECT_EQ(EndedAttemptsJson(status, {Pod(0, 4, "Succeeded")}), std::vector<int>({0, 2, 7}));
  EXPECT_EQ(EndedAttemptsJson(status, {}), std::vector<int>({0, 2, 7}));
  // Once ended, stays ended, even if a pod names it again.
  EXPECT_EQ(EndedAttemptsJson(status, {Pod(0, 4), Pod(7, 9)}), std::vector<int>({2, 7}));
  // Nothing measured: nothing ends, and malformed entries are ignored.
  EXPECT_TRUE(EndedAttemptsJson(json::object(), {}).empty());
  EXPECT_EQ(EndedAttemptsJson({{"trials", {{{"attempt", "x"}}, 5, {{"attempt", 3}}}}, {"endedAttempts", {"y", -1, 3}}},
                          {Pod(3, 1)}),
            std::vector<int>({3}));
}

Trial TrialOf(int attempt, int workers, bool oom = false) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.oom_killed = oom;
  t.samples = oom ? 0 : 20;
  return t;
}

TEST(TuningReconcilerTest, BoundTrialsDropsRepeatsThenTheOldestButKeepsOomCapsAndTheNewest) {
  std::map<int, Trial> few = {{0, TrialOf(0, 4)}, {1, TrialOf(1, 4)}};
  EXPECT_EQ(BoundTrials(few, 4).size(), 2u);  // under the bound: untouched

  // Attempts 0..9: 4 workers (0), OOM at 40 (1), then 8 and 12 alternating, 12 newest.
  std::map<int, Trial> many = {{0, TrialOf(0, 4)}, {1, TrialOf(1, 40, true)}};
  for (int a = 2; a < 10; ++a) many[a] = TrialOf(a, a % 2 ? 12 : 8);
  std::map<int, Trial> bound = BoundTrials(many, 4);
  std::vector<int> kept;
  for (const auto& [a, t] : bound) kept.push_back(a);
  EXPECT_EQ(kept, std::vector<int>({0, 1, 8, 9}));  // the latest of each count, the OOM cap

  // Tighter: the oldest non-OOM trials go before the OOM cap; the newest always stays.
  bound = BoundTrials(many, 2);
  kept.clear();
  for (const auto& [a, t] : bound) kept.push_back(a);
  EXPECT_EQ(kept, std::vector<int>({1, 9}));
  bound = BoundTrials(many, 1);
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound.begin()->first, 9);
}

TEST(TuningReconcilerTest, AWorkloadRestartedThousandsOfTimesKeepsABoundedStatus) {
  // A crash-looping JobSet with a large maxRestarts: every attempt reaches a trial.
  json stored;
  for (int attempt = 0; attempt < 300; ++attempt) {
    ReconcileOutput out = ReconcileTuning(Input(stored.is_null() ? std::nullopt : std::optional<json>(stored),
                                                {Pod(attempt, 4 + attempt % 7, "Failed")},
                                                {{attempt, FedSteps(30)}}));
    stored = Stored(out);
  }
  EXPECT_EQ(stored["status"]["trials"].size(), kMaxStoredTrials);
  EXPECT_EQ(stored["status"]["trials"].back()["attempt"], 299);
  EXPECT_EQ(stored["status"]["endedAttempts"].size(), kMaxStoredTrials);
  EXPECT_LT(stored["status"].dump().size(), 64u * 1024) << "status bytes";
  EXPECT_EQ(stored["status"]["recommendation"]["attempt"], 300);
}

TEST(TuningReconcilerTest, AGrainTuningIsForgottenOnlyAfterItsLastActivityIsOldEnough) {
  EXPECT_EQ(ParseRfc3339("2026-11-30T06:00:00Z"), 1796018400);
  EXPECT_EQ(ParseRfc3339("2026-11-30T06:00:00.123456Z"), 1796018400);
  for (const char* bad : {"", "2026-11-30", "2026-11-30T06:00:00", "2026-11-30T06:00:00+01:00", "yesterday"})
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;

  const std::time_t created = *ParseRfc3339("2026-10-01T00:00:00Z");
  json gt = {{"metadata", {{"creationTimestamp", "2026-10-01T00:00:00Z"}}},
             {"status", {{"recommendation", {{"decidedAt", "2026-10-05T00:00:00Z"}}},
                         {"conditions", {{{"type", "Converged"}, {"lastTransitionTime", "2026-10-07T00:00:00Z"}}}}}}};
  const std::chrono::seconds week(7 * 86400);
  const std::time_t last = created + 6 * 86400;  // the condition changed on day 6
  EXPECT_FALSE(Forgettable(gt, week, last + week.count()));      // exactly a week: kept
  EXPECT_TRUE(Forgettable(gt, week, last + week.count() + 1));
  EXPECT_FALSE(Forgettable(gt, std::chrono::seconds(0), last + 100 * week.count()));  // off
  EXPECT_FALSE(Forgettable(json{{"metadata", {{"creationTimestamp", "garbled"}}}}, week, last + 100 * week.count()));
  EXPECT_FALSE(Forgettable(json::array(), week, last));
}

TEST(TuningReconcilerTest, ModeOffIsPausedAndUnreadablePodsAreAProblem) {
  ReconcileOutput created = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {}));
  ReconcileOutput off = ReconcileTuning(Input(Stored(created, {{"tuningKey", "llama"}, {"mode", "Off"}}),
                                              {Pod(0, 4)}, {{0, DataBoundSteps(30)}}));
  EXPECT_EQ(off.status["phase"], "Paused");
  ReconcileInput blind = Input(std::nullopt, {Pod(0, 4)}, {});
  blind.inputs.reset();
  ReconcileOutput out = ReconcileTuning(blind);
  EXPECT_FALSE(out.problem.empty());
}

}  // namespace
}  // namespace graintune::op

namespace graintune::op {
namespace {

PodFacts PinnedPod(int attempt, int workers, const std::string& phase = "Running", bool oom = false) {
  PodFacts p = Pod(attempt, workers, phase, oom);
  p.pins_workers = true;
  p.checkpoint_dir = "gs://ckpt/llama/checkpoints";
  p.steps = 40;
  return p;
}

json ConditionOf(const json& status, const std::string& type) {
  for (const json& c : status["conditions"])
    if (c["type"] == type) return c;
  return nullptr;
}

// A data-bound attempt of a run that resumes Grain's iterator: the next attempt keeps the run's
// value, and what it measured goes to the next run.
TEST(ReconcilePinnedTest, TheNextAttemptKeepsTheRunsValueAndTheNextRunGetsTheMeasuredOne) {
  const ReconcileOutput out = ReconcileTuning(Input(std::nullopt, {PinnedPod(0, 4)}, {{0, DataBoundSteps(20)}}));
  ASSERT_EQ(out.status["runs"].size(), 1u);
  EXPECT_EQ(out.status["runs"][0]["workers"], 4);
  const int next_run = out.status["nextRun"]["workers"];
  EXPECT_GT(next_run, 4);  // data-bound at 4
  EXPECT_EQ(out.status["recommendation"]["workers"], 4);
  EXPECT_EQ(out.status["recommendation"]["attempt"], 1);
  EXPECT_EQ(out.status["recommendation"]["reason"],
            "this run resumes Grain's iterator from its checkpoints (gs://ckpt/llama/checkpoints); "
            "attempt 1 keeps 4 workers; the next run of this workload gets " + std::to_string(next_run));
  const json pinned = ConditionOf(out.status, "ValuePinned");
  EXPECT_EQ(pinned["status"], "True");
  EXPECT_EQ(pinned["reason"], "GrainIteratorCheckpoint");

  // Attempt 1 starts (a restart): the Event says it keeps the value, once.
  const ReconcileOutput restarted = ReconcileTuning(
      Input(Stored(out), {PinnedPod(0, 4, "Failed"), PinnedPod(1, 4)}, {}));
  auto pinned_events = [](const ReconcileOutput& o) {
    return std::count_if(o.events.begin(), o.events.end(),
                         [](const EventToRecord& e) { return e.reason == "ValuePinned"; });
  };
  ASSERT_EQ(pinned_events(restarted), 1);
  EXPECT_NE(std::find_if(restarted.events.begin(), restarted.events.end(), [](const EventToRecord& e) {
              return e.note.find("attempt 1 keeps 4 workers") != std::string::npos;
            }), restarted.events.end());
  EXPECT_EQ(restarted.status["recommendation"]["workers"], 4);
  EXPECT_EQ(pinned_events(ReconcileTuning(
                Input(Stored(restarted), {PinnedPod(0, 4, "Failed"), PinnedPod(1, 4)}, {}))),
            0);
}

TEST(ReconcilePinnedTest, AnUnpinnedRunIsRetunedAsBefore) {
  const ReconcileOutput out = ReconcileTuning(Input(std::nullopt, {Pod(0, 4)}, {{0, DataBoundSteps(20)}}));
  EXPECT_GT(out.status["recommendation"]["workers"].get<int>(), 4);
  EXPECT_EQ(out.status["recommendation"]["workers"], out.status["nextRun"]["workers"]);
  EXPECT_EQ(ConditionOf(out.status, "ValuePinned")["status"], "False");
  EXPECT_FALSE(out.status.contains("runs"));
}

TEST(ReconcilePinnedTest, AnOomKilledPinnedAttemptKeepsItsValueAndSaysTheWaysOut) {
  const ReconcileOutput out =
      ReconcileTuning(Input(std::nullopt, {PinnedPod(0, 8, "Failed", /*oom=*/true)}, {}));
  ASSERT_FALSE(out.events.empty());
  EXPECT_EQ(out.events[0].type, "Warning");
  EXPECT_EQ(out.events[0].reason, "OOMKilledInPinnedRun");
  for (const char* way : {"grain_use_elastic_iterator=true", "packing=false", "run_name",
                          "grain_per_worker_buffer_size"})
    EXPECT_NE(out.events[0].note.find(way), std::string::npos) << way;
  EXPECT_EQ(out.status["recommendation"]["workers"], 8) << "never a lower value silently";
  EXPECT_LT(out.status["nextRun"]["workers"].get<int>(), 8) << "the cap applies to the next run";
}

TEST(ReconcilePinnedTest, ARunThatExitsBeforeItsLastStepEndedEarly) {
  PodFacts stopped = PinnedPod(1, 2, "Succeeded");
  stopped.last_step = 12;
  const ReconcileOutput out = ReconcileTuning(Input(std::nullopt, {PinnedPod(0, 2, "Failed"), stopped}, {}));
  EXPECT_EQ(out.status["endedEarly"], (json{{"attempt", 1}, {"pod", "llama-1"}, {"lastStep", 12}, {"steps", 40}}));
  const json c = ConditionOf(out.status, "EndedEarly");
  EXPECT_EQ(c["status"], "True");
  EXPECT_NE(c["message"].get<std::string>().find("exited 0 after step 12 of 40"), std::string::npos);
  ASSERT_EQ(std::count_if(out.events.begin(), out.events.end(),
                          [](const EventToRecord& e) { return e.reason == "EndedEarly" && e.type == "Warning"; }),
            1);
  // Once stored, the same stop is not announced again.
  const ReconcileOutput again = ReconcileTuning(Input(Stored(out), {PinnedPod(0, 2, "Failed"), stopped}, {}));
  EXPECT_EQ(std::count_if(again.events.begin(), again.events.end(),
                          [](const EventToRecord& e) { return e.reason == "EndedEarly"; }),
            0);
  // A run that reached its last step did not end early.
  PodFacts finished = stopped;
  finished.last_step = 39;
  EXPECT_EQ(ConditionOf(ReconcileTuning(Input(std::nullopt, {finished}, {})).status, "EndedEarly")["status"], "False");
}

}  // namespace
}  // namespace graintune::op

namespace graintune::op {
namespace {

// An answer within the bounds but absurd (a day per step, a billion tokens per second, 100,000
// workers seen) still yields a bounded trial and a value inside the policy's bounds.
TEST(ReconcileHostileTest, AbsurdButReadableFiguresStayWithinThePolicysBounds) {
  for (double seconds : {86400.0, 0.0, 1e-9}) {
    telemetry::StepsDocument d;
    for (int s = 1; s <= 20; ++s) d.steps.push_back({s, seconds, 1e6, 1e9});
    d.process = telemetry::ProcessFigures{100000, 1.0, 1e15, 1e15, 100000};
    ReconcileInput in = Input(std::nullopt, {Pod(0, 4)}, {{0, d}});
    in.inputs->policy.min_workers = 2;
    in.inputs->policy.max_workers = 48;
    const ReconcileOutput out = ReconcileTuning(in);
    ASSERT_TRUE(out.status.contains("recommendation")) << out.status.dump();
    const int w = out.status["recommendation"]["workers"];
    EXPECT_GE(w, 2) << seconds;
    EXPECT_LE(w, 48) << seconds;
    for (const json& t : out.status["trials"])
      for (const auto& [k, v] : t.items())
        if (v.is_number()) {
          EXPECT_TRUE(std::isfinite(v.get<double>())) << k << " " << v;
        }
  }
}

// A fed run that keeps its value, with the exporter's process figures: its workers idled, so
// the next run (decided as a value kept for a whole run) gets fewer, and what it measured is
// kept for runs of the same dataset on the same machine type.
TEST(ReconcilePinnedTest, AFedRunTeachesTheNextRunAndRecordsWhatTransfers) {
  telemetry::StepsDocument fed = FedSteps(40);
  fed.process = telemetry::ProcessFigures{.workers = 40, .worker_busy_fraction = 0.15,
                               .worker_memory_bytes = 1.5e9, .trainer_memory_bytes = 60e9,
                               .trainer_cpu_cores = 3};
  ReconcileInput in = Input(std::nullopt, {PinnedPod(0, 40)}, {{0, fed}});
  in.inputs->demand.transfer_key = "llama3-8b batch 4 seq 4096, 4x v6e on ct6e-standard-4t, settings 1f";
  const ReconcileOutput out = ReconcileTuning(in);
  const json learned = out.status["learned"];
  // The fed throughput is the demand of workloads with the same model settings and chips.
  EXPECT_EQ(learned["demandKey"], in.inputs->demand.transfer_key);
  EXPECT_EQ(learned["machineType"], "ct6e-standard-4t");
  EXPECT_EQ(learned["rateBasis"], "busy share of attempt 0");
  EXPECT_EQ(learned["workerMemoryBytes"], 1.5e9);
  const double fed_tput = learned["fedTokensPerSecondPerHost"];
  EXPECT_NEAR(fed_tput, 65536 / 4.3, 200);
  // The rate counts the busy share 4 points higher: throughput / (40 x 0.19).
  EXPECT_NEAR(learned["tokensPerSecondPerWorker"].get<double>(), fed_tput / (40 * 0.19), 1);
  EXPECT_EQ(out.status["learnedTokensPerSecondPerWorker"], learned["tokensPerSecondPerWorker"]);

  // The next run: 40 x 0.19 = 7.6 busy workers' worth, x1.4 -> 11; this run keeps its 40.
  EXPECT_EQ(out.status["nextRun"]["workers"], 11) << out.status["nextRun"].dump();
  EXPECT_EQ(out.status["recommendation"]["workers"], 40);
  // An unpinned workload's next attempt is decided for an attempt: no busy-share margin.
  PodFacts free_pod = Pod(0, 40);
  const ReconcileOutput free_run = ReconcileTuning(Input(std::nullopt, {free_pod}, {{0, fed}}));
  EXPECT_LT(free_run.status["recommendation"]["workers"].get<int>(), 11);
}

// The record is keyed by the count the trainer really started with (the start check's report):
// a pod admitted with 1 whose check started it with the 2 its checkpoint saved is a trial of 2,
// and its run's value is 2; a pod whose trainer ran with MaxText's own pick (a -1 the check was
// to fill, but it failed open) is no trial at all.
TEST(TuningReconcilerTest, TrialsAndRunsAreKeyedByTheCountTheStartCheckStartedWith) {
  PodFacts pod = Pod(0, 1);
  pod.pins_workers = true;
  pod.checkpoint_dir = "gs://b/run/checkpoints";
  telemetry::StepsDocument steps = FedSteps(30);
  steps.start_check = telemetry::StartCheckReport{.checked = true, .changed = true, .admission_value = 1,
                                                  .written_value = 1, .started_value = 2, .why = "saved with 2"};
  const ReconcileOutput out = ReconcileTuning(Input(std::nullopt, {pod}, {{0, steps}}));
  ASSERT_TRUE(out.status.contains("trials")) << out.status.dump();
  EXPECT_EQ(out.status["trials"][0]["workers"], 2);
  ASSERT_TRUE(out.status.contains("runs")) << out.status.dump();
  EXPECT_EQ(out.status["runs"][0]["workers"], 2);

  steps.start_check = telemetry::StartCheckReport{.checked = false, .admission_value = 9, .fill_value = 9,
                                                  .why = "MaxText's loader took longer than 120 s"};
  const ReconcileOutput open = ReconcileTuning(Input(std::nullopt, {pod}, {{0, steps}}));
  EXPECT_FALSE(open.status.contains("trials")) << open.status.dump();
  EXPECT_FALSE(open.status.contains("runs")) << open.status.dump();
  steps.start_check->started_value = -1;  // the check left MaxText's -1 (a checkpoint it could not read)
  steps.start_check->checked = true;
  EXPECT_FALSE(ReconcileTuning(Input(std::nullopt, {pod}, {{0, steps}})).status.contains("trials"));
  steps.start_check = telemetry::StartCheckReport{.checked = false, .admission_value = 1, .why = "no MaxText"};
  EXPECT_EQ(ReconcileTuning(Input(std::nullopt, {pod}, {{0, steps}})).status["trials"][0]["workers"], 1);
}

}  // namespace
}  // namespace graintune::op
