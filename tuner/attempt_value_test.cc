#include "tuner/attempt_value.h"

#include <gtest/gtest.h>

#include "tuner/machine_types.h"

namespace graintune {
namespace {

TuningInputs Inputs(Mode mode = Mode::kAuto) {
  TuningInputs in;
  in.host = HostShapeOf(*FindMachineType("ct6e-standard-4t"));
  WorkloadShape w;
  w.model_name = "llama3-8b";
  w.per_device_batch_size = 2;
  w.max_target_length = 8192;
  in.demand = *EstimateDemand(w, in.host);
  in.profile = ProfileWithOverrides(DatasetKind::kRawText, 2100, 2.0 * (1 << 30));
  in.policy.mode = mode;
  return in;
}

Trial TrialOf(int attempt, int workers) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  return t;
}

// Attempt 0 ran with 4 workers; the operator recommends 9 for attempt 1.
TuningHistory Recommending9ForAttempt1() {
  TuningHistory h;
  h.trials = {TrialOf(0, 4)};
  h.recommended_workers = 9;
  h.recommendation_attempt = 1;
  h.recommendation_reason = "measured 2.1k tok/s per worker";
  return h;
}

TEST(AttemptValueTest, WithoutHistoryDecideMakesTheValue) {
  const AttemptValue v = ValueForAttempt(Inputs(), std::nullopt, {});
  ASSERT_TRUE(v.decision);
  EXPECT_EQ(v.workers, v.decision->workers);
  EXPECT_EQ(v.reason, v.decision->reason);
  EXPECT_EQ(v.attempt, 0);
  EXPECT_FALSE(v.keep_as_written);
}

TEST(AttemptValueTest, TheRecommendationWinsForTheNextAttempt) {
  const AttemptValue v = ValueForAttempt(Inputs(), Recommending9ForAttempt1(),
                                         {.attempt = 1, .has_restart_label = true});
  EXPECT_EQ(v.workers, 9);
  EXPECT_EQ(v.attempt, 1);
  EXPECT_EQ(v.reason, "attempt 1: measured 2.1k tok/s per worker");
  EXPECT_FALSE(v.decision);
}

TEST(AttemptValueTest, APodRetryWithoutTheRestartLabelIsTheRecommendedAttempt) {
  const AttemptValue v = ValueForAttempt(Inputs(), Recommending9ForAttempt1(), {.attempt = 3});
  EXPECT_EQ(v.attempt, 1);
  EXPECT_EQ(v.workers, 9);
}

TEST(AttemptValueTest, ALatePodOfAMeasuredAttemptKeepsItsValue) {
  const AttemptValue v = ValueForAttempt(Inputs(), Recommending9ForAttempt1(),
                                         {.attempt = 0, .has_restart_label = true});
  EXPECT_EQ(v.workers, 4);
  EXPECT_EQ(v.attempt, 0);
  EXPECT_EQ(v.reason, "attempt 0 ran with 4 workers");
}

TEST(AttemptValueTest, ANewRunOfAnEndedAttemptIsTheRecommendedAttempt) {
  TuningHistory h = Recommending9ForAttempt1();
  h.ended_attempts = {0};
  const AttemptValue v = ValueForAttempt(Inputs(), h, {.attempt = 0, .has_restart_label = true});
  EXPECT_EQ(v.attempt, 1);
  EXPECT_EQ(v.workers, 9);
  // Without a checkpoint folder graintune cannot tell a new run from a re-admission, and says so.
  EXPECT_EQ(v.reason, "its attempt 0 had ended, so this is a new run or a re-admission; the workload's history "
                      "(status.trials) files it as attempt 1. attempt 1: measured 2.1k tok/s per worker");
  // A JobSet's announcement is never a new run: it keeps attempt 0's value.
  const AttemptValue announced = ValueForAttempt(
      Inputs(), h, {.attempt = 0, .has_restart_label = true, .announces_first_attempt = true});
  EXPECT_EQ(announced.attempt, 0);
  EXPECT_EQ(announced.workers, 4);
}

TEST(AttemptValueTest, InitialModeKeepsTheFirstAttemptsValue) {
  TuningHistory h = Recommending9ForAttempt1();
  h.trials.push_back(TrialOf(1, 9));
  h.recommendation_attempt = 2;
  const AttemptValue v = ValueForAttempt(Inputs(Mode::kInitial), h,
                                         {.attempt = 2, .has_restart_label = true});
  EXPECT_EQ(v.workers, 4);
  EXPECT_EQ(v.reason, "policy mode Initial: keeps the value attempt 0 was given (4)");
  // Before any attempt is recorded, Initial takes the recommendation for attempt 0.
  TuningHistory fresh;
  fresh.recommended_workers = 7;
  EXPECT_EQ(ValueForAttempt(Inputs(Mode::kInitial), fresh, {}).workers, 7);
}

TEST(AttemptValueTest, AnAppliedValueWithNothingNewerIsKeptAsWritten) {
  EXPECT_TRUE(ValueForAttempt(Inputs(), TuningHistory{}, {.only_applied_values = true}).keep_as_written);
  EXPECT_FALSE(ValueForAttempt(Inputs(), Recommending9ForAttempt1(),
                               {.attempt = 1, .only_applied_values = true})
                   .keep_as_written);
}

TEST(AttemptValueTest, AVeryLongReasonIsCut) {
  TuningHistory h = Recommending9ForAttempt1();
  h.recommendation_reason = std::string(5000, 'x');
  EXPECT_EQ(ValueForAttempt(Inputs(), h, {.attempt = 1}).reason.size(), kMaxReasonBytes);
}

TEST(AttemptValueTest, EvalWorkersAreAQuarterAndTheTwoFitTheCeiling) {
  EXPECT_EQ(SplitWithEval(8, 64).workers, 8);
  EXPECT_EQ(SplitWithEval(8, 64).eval_workers, 2);
  EXPECT_EQ(SplitWithEval(1, 64).eval_workers, 1);
  EXPECT_EQ(SplitWithEval(8, 9).workers, 7);  // 8 + 2 > 9: training gives way
  EXPECT_EQ(SplitWithEval(8, 2).workers, 1);  // never below 1
  // A trimmed count keeps the share that fits beside it: 89 within 89 is 71 + 18, not 66 + 23.
  EXPECT_EQ(SplitWithEval(89, 89).workers, 71);
  EXPECT_EQ(SplitWithEval(89, 89).eval_workers, 18);
}

// A reinvocation, or a later pod of a run that keeps its value, splits the training count the
// first admission kept: it must get the same eval share back (found by the admission fuzzer,
// where the eval count moved from 23 to 17 on reinvocation).
TEST(AttemptValueTest, SplittingTheKeptTrainingCountAgainChangesNothing) {
  for (int ceiling = 1; ceiling <= 400; ++ceiling)
    for (int workers = 1; workers <= 500; workers += 7) {
      const WorkerSplit first = SplitWithEval(workers, ceiling);
      const WorkerSplit again = SplitWithEval(first.workers, ceiling);
      ASSERT_EQ(again.workers, first.workers) << workers << " within " << ceiling;
      ASSERT_EQ(again.eval_workers, first.eval_workers) << workers << " within " << ceiling;
      ASSERT_LE(first.workers, std::max(1, workers));
      if (ceiling >= 2) {
        ASSERT_LE(first.workers + first.eval_workers, ceiling);
      }
      // The training side gives way only as far as it must.
      if (first.workers < workers) {
        ASSERT_GT(first.workers + 1 + std::max(1, (first.workers + 4) / 4), ceiling);
      }
    }
}

}  // namespace
}  // namespace graintune

namespace graintune {
namespace {

constexpr char kDir[] = "gs://ckpt/llama/checkpoints";

AttemptQuery Pinned(int attempt) {
  AttemptQuery q;
  q.attempt = attempt;
  q.has_restart_label = true;
  q.pins_workers = true;
  q.checkpoint_dir = kDir;
  return q;
}

TEST(AttemptValuePinnedTest, AResumeKeepsTheValueRecordedForItsRunOverTheRecommendation) {
  TuningHistory h = Recommending9ForAttempt1();
  h.runs[kDir] = {4, 0};
  h.next_run_workers = 9;
  const AttemptValue v = ValueForAttempt(Inputs(), h, Pinned(1));
  EXPECT_EQ(v.workers, 4);
  EXPECT_EQ(v.attempt, 1);
  EXPECT_EQ(v.reason,
            "this run resumes Grain's iterator from its checkpoints (gs://ckpt/llama/checkpoints); "
            "attempt 1 keeps 4 workers; the next run of this workload gets 9");
}

TEST(AttemptValuePinnedTest, WithoutARecordTheValueTheTemplatesHoldIsKept) {
  AttemptQuery q = Pinned(2);
  q.only_applied_values = true;
  q.written_workers = 6;
  const AttemptValue v = ValueForAttempt(Inputs(), Recommending9ForAttempt1(), q);
  EXPECT_EQ(v.workers, 6);
  EXPECT_FALSE(v.keep_as_written);
  EXPECT_NE(v.reason.find("attempt 2 keeps 6 workers"), std::string::npos) << v.reason;
}

TEST(AttemptValuePinnedTest, AnotherRunStartsWithTheNextRunsValueAndKeepsIt) {
  TuningHistory h = Recommending9ForAttempt1();
  h.runs["gs://ckpt/older-run/checkpoints"] = {4, 0};
  h.next_run_workers = 7;
  h.next_run_reason = "measured 2.1k tok/s per worker";
  const AttemptValue v = ValueForAttempt(Inputs(), h, Pinned(0));
  EXPECT_EQ(v.workers, 7);
  EXPECT_EQ(v.reason, std::string("first attempt of run ") + kDir +
                          ": measured 2.1k tok/s per worker; the run keeps this value (its "
                          "checkpoints will hold Grain's iterator)");
}

// A run that will keep its first value is decided as a value kept for a whole run: more
// headroom than an attempt the next restart can correct, and the reason says so.
TEST(AttemptValuePinnedTest, AFirstRunWithoutHistoryIsDecidedForAWholeRunAndSaysItKeepsTheValue) {
  const AttemptValue v = ValueForAttempt(Inputs(), std::nullopt, Pinned(0));
  const AttemptValue unpinned = ValueForAttempt(Inputs(), std::nullopt, {});
  TuningInputs whole_run = Inputs();
  whole_run.lifetime = ValueLifetime::kRun;
  const Decision d = Decide(whole_run, {});
  EXPECT_EQ(v.workers, d.workers);
  EXPECT_GT(v.workers, unpinned.workers);
  EXPECT_EQ(v.reason, d.reason + "; the run keeps this value (its checkpoints will hold "
                                 "Grain's iterator)");
  EXPECT_NE(v.reason.find("this run keeps its value"), std::string::npos) << v.reason;
}

TEST(AttemptValuePinnedTest, ARecordWithoutAValueIsNotARecord) {
  TuningHistory h = Recommending9ForAttempt1();
  h.runs[kDir] = {0, 0};
  AttemptQuery q = Pinned(1);
  q.only_applied_values = true;
  q.written_workers = 5;
  EXPECT_EQ(ValueForAttempt(Inputs(), h, q).workers, 5);
}

TEST(AttemptValuePinnedTest, AnUnpinnedAttemptStillTakesTheRecommendation) {
  TuningHistory h = Recommending9ForAttempt1();
  h.runs[kDir] = {4, 0};
  AttemptQuery q = Pinned(1);
  q.pins_workers = false;
  EXPECT_EQ(ValueForAttempt(Inputs(), h, q).workers, 9);
}

}  // namespace
}  // namespace graintune

namespace graintune {
namespace {

// A new workload under the same key (a resubmission with another run_name) after attempt 0's
// pods are gone is numbered as the next attempt, and starts with the next run's value.
TEST(AttemptValuePinnedTest, ANewRunAfterAnEndedAttemptIsTheNextAttemptWithTheNextRunsValue) {
  TuningHistory h = Recommending9ForAttempt1();
  h.ended_attempts = {0};
  h.runs["gs://ckpt/first/checkpoints"] = {4, 0};
  h.next_run_workers = 9;
  h.next_run_reason = "measured";
  AttemptQuery q;
  q.attempt = 0;
  q.has_restart_label = true;
  q.pins_workers = true;
  q.checkpoint_dir = "gs://ckpt/second/checkpoints";
  const AttemptValue v = ValueForAttempt(Inputs(), h, q);
  EXPECT_EQ(v.attempt, 1);
  EXPECT_EQ(v.workers, 9);
  EXPECT_EQ(v.reason.rfind("a new run: its attempt 0; the workload's history (status.trials) files it as attempt 1, after earlier runs' attempts. first attempt of run gs://ckpt/second", 0), 0u)
      << v.reason;
  // The same run re-admitted (its checkpoint folder is known) is not called a new run; it keeps its value.
  q.checkpoint_dir = "gs://ckpt/first/checkpoints";
  const AttemptValue again = ValueForAttempt(Inputs(), h, q);
  EXPECT_EQ(again.attempt, 1);
  EXPECT_EQ(again.workers, 4);
  EXPECT_EQ(again.reason.rfind("this run again, re-admitted after its attempt 0 ended; the workload's history "
                               "(status.trials) files it as attempt 1. ", 0), 0u)
      << again.reason;
}

}  // namespace
}  // namespace graintune
