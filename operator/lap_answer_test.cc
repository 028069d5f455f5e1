// The operator's answer to an attempt's practice laps (lap_answer.h).
#include "operator/lap_answer.h"

#include <gtest/gtest.h>

#include "operator/reconcile_fixtures_for_test.h"

namespace graintune::op {
namespace {

// A pod of attempt 0 whose launcher waits 120 s for the run's value.
PodFacts LapPod(const std::string& name, int admission = 64) {
  PodFacts p = Pod(0, admission);
  p.name = name;
  p.uid = "uid-" + name;
  p.admission_workers = admission;
  p.lap_answer_wait_seconds = 120;
  return p;
}

// What the exporter reports of a fed lap of `workers` at 4.3 s a step, busy `busy`.
telemetry::LapReport FedLap(int workers, double busy, double age = 2) {
  telemetry::LapReport lap;
  lap.steps = FedSteps(22).steps;
  lap.process = telemetry::ProcessFigures{workers, busy, 1.6e9, 3e10, 1.5};
  lap.result = contract::LapResult{.completed = true, .outcome = "completed", .wall_seconds = 140,
                                    .steps = 22, .workers = workers};
  lap.result_age_seconds = age;
  return lap;
}

TEST(AnswerLapsTest, NoPodAwaitingAnAnswerNeedsNone) {
  PodFacts plain = Pod(0, 8);
  EXPECT_FALSE(AnswerLaps({plain}, {}, SeedInputs(), 2).has_value());
  PodFacts answered = LapPod("a");
  answered.lap_answer = "7";
  EXPECT_FALSE(AnswerLaps({answered}, {}, SeedInputs(), 2).has_value());
}

// Two hosts: no answer until both laps ended; then one value, from the laps: 64 workers busy 6%
// of a fed 4.3 s step is far more than the run needs (the request measured 4 starved, 8 fed).
TEST(AnswerLapsTest, EveryHostsLapGivesOneValue) {
  const std::vector<PodFacts> pods = {LapPod("host-0"), LapPod("host-1")};
  std::map<std::string, telemetry::LapReport> reports = {{"uid-host-0", FedLap(64, 0.06)}};
  telemetry::LapReport running = FedLap(64, 0.06);
  running.result.reset();
  running.result_age_seconds = -1;
  reports["uid-host-1"] = running;
  EXPECT_FALSE(AnswerLaps(pods, reports, SeedInputs(), 2).has_value());
  reports["uid-host-1"] = FedLap(64, 0.07);
  std::optional<LapAnswer> answer = AnswerLaps(pods, reports, SeedInputs(), 2);
  ASSERT_TRUE(answer && answer->decision) << (answer ? answer->text : "no answer");
  EXPECT_GE(answer->decision->workers, 5) << answer->decision->reason;
  EXPECT_LE(answer->decision->workers, 11) << answer->decision->reason;
  EXPECT_EQ(answer->text, std::to_string(answer->decision->workers));
  EXPECT_EQ(answer->laps.size(), 2u);
  EXPECT_DOUBLE_EQ(answer->wall_seconds, 140);
}

// Any failure: the run keeps admission's value, and the answer says why at once.
TEST(AnswerLapsTest, AFailedLapAnswersNoneAtOnce) {
  const std::vector<PodFacts> pods = {LapPod("host-0"), LapPod("host-1")};
  telemetry::LapReport killed = FedLap(64, 0.06);
  killed.result->completed = false;
  killed.result->outcome = "killed by signal 9";
  std::optional<LapAnswer> answer = AnswerLaps(pods, {{"uid-host-1", killed}}, SeedInputs(), 2);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->text, "none: the lap of host-1 killed by signal 9");
  EXPECT_FALSE(answer->decision.has_value());

  std::vector<PodFacts> oom = pods;
  oom[0].oom_killed = true;
  answer = AnswerLaps(oom, {}, SeedInputs(), 2);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->text, "none: the lap of host-0 was OOM-killed");

  // Laps with too few steps to summarise give no value either.
  telemetry::LapReport short_lap = FedLap(64, 0.06);
  short_lap.steps.resize(3);
  answer = AnswerLaps({pods[0]}, {{"uid-host-0", short_lap}}, SeedInputs(), 2);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->text.rfind("none: the lap of host-0: ", 0), 0u) << answer->text;
}

// One host never reports: once an answer could no longer reach the launchers in time, it is
// none, which changes nothing they do (they started their trainers with admission's value).
TEST(AnswerLapsTest, AnAnswerThatWouldComeTooLateIsNone) {
  const std::vector<PodFacts> pods = {LapPod("host-0"), LapPod("host-1")};
  EXPECT_FALSE(AnswerLaps(pods, {{"uid-host-0", FedLap(64, 0.06, 60)}}, SeedInputs(), 2).has_value());
  std::optional<LapAnswer> late = AnswerLaps(pods, {{"uid-host-0", FedLap(64, 0.06, 91)}}, SeedInputs(), 2);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->text.rfind("none: the laps' answer came too late: a launcher waits 120 s", 0), 0u) << late->text;
  EXPECT_NE(late->text.find("not every host reported its lap"), std::string::npos) << late->text;
}

// A pod of the attempt already answered: the others get the same answer, whatever their laps.
TEST(AnswerLapsTest, OneAnswerPerAttempt) {
  PodFacts answered = LapPod("host-0");
  answered.lap_answer = "7";
  const std::vector<PodFacts> pods = {answered, LapPod("host-1")};
  std::optional<LapAnswer> answer = AnswerLaps(pods, {{"uid-host-1", FedLap(64, 0.9)}}, SeedInputs(), 2);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->text, "7");
}

}  // namespace
}  // namespace graintune::op
