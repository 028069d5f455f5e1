#include "operator/run_records.h"

#include <gtest/gtest.h>


namespace graintune::op {
namespace {

using json = nlohmann::json;

PodFacts Pod(int attempt, int workers, bool pins, const std::string& dir = "/ckpt/r/checkpoints") {
  PodFacts p;
  p.name = "p" + std::to_string(attempt);
  p.attempt = attempt;
  p.workers = workers;
  p.pins_workers = pins;
  p.checkpoint_dir = dir;
  p.phase = "Running";
  return p;
}

TEST(RunRecordsTest, APinnedRunIsRecordedWithItsFirstAttemptsValueAndNeverChanged) {
  std::vector<workload::RunStatus> runs = RunsStatus({}, {Pod(1, 6, true), Pod(0, 4, true)});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(workload::ToJson(runs[0]),
            (json{{"checkpointDir", "/ckpt/r/checkpoints"}, {"workers", 4}, {"firstAttempt", 0}}));
  // A later view with other values leaves the entry as written.
  runs = RunsStatus({.runs = runs}, {Pod(2, 9, true)});
  EXPECT_EQ(runs[0].workers, 4);
  // Unpinned attempts and pods without a value record nothing.
  EXPECT_TRUE(RunsStatus({}, {Pod(0, 4, false), Pod(1, 0, true)}).empty());
}

TEST(RunRecordsTest, RunsAreBoundedKeepingTheNewest) {
  std::vector<PodFacts> pods;
  for (int a = 0; a < 40; ++a) pods.push_back(Pod(a, 3, true, "/ckpt/" + std::to_string(a)));
  const std::vector<workload::RunStatus> runs = RunsStatus({}, pods);
  ASSERT_EQ(runs.size(), kMaxStoredRuns);
  EXPECT_EQ(runs.back().first_attempt, 39);
  EXPECT_EQ(runs.front().first_attempt, 40 - static_cast<int>(kMaxStoredRuns));
}

TEST(RunRecordsTest, TheNewestAttemptIsPinnedOnlyWhenItsPodsRestoreTheIterator) {
  const std::map<std::string, RunRecord> runs =
      workload::RunRecordsOf(RunsStatus({}, {Pod(0, 4, true)}));
  std::optional<PinnedAttempt> p = NewestPinnedAttempt(runs, {Pod(0, 4, true), Pod(1, 4, true)});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->attempt, 1);
  EXPECT_EQ(p->run.workers, 4);
  EXPECT_FALSE(NewestPinnedAttempt(runs, {Pod(0, 4, true), Pod(1, 7, false)}));
  EXPECT_FALSE(NewestPinnedAttempt({}, {Pod(0, 4, true)}));
}

TEST(RunRecordsTest, ASucceededPodBeforeItsLastStepEndedEarly) {
  PodFacts stopped = Pod(1, 2, true);
  stopped.phase = "Succeeded";
  stopped.steps = 20;
  stopped.last_step = 12;
  PodFacts finished = Pod(0, 1, true);
  finished.phase = "Succeeded";
  finished.steps = 20;
  finished.last_step = 19;
  EXPECT_FALSE(NewestEndedEarly({finished}));
  std::optional<EndedEarly> e = NewestEndedEarly({finished, stopped});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->attempt, 1);
  EXPECT_EQ(e->last_step, 12);
  EXPECT_EQ(ToJson(*e), (json{{"attempt", 1}, {"pod", "p1"}, {"lastStep", 12}, {"steps", 20}}));
  // A failed pod, or one whose steps or last step are unknown, tells nothing.
  PodFacts failed = stopped;
  failed.phase = "Failed";
  PodFacts unknown = stopped;
  unknown.last_step.reset();
  EXPECT_FALSE(NewestEndedEarly({failed, unknown}));
}

}  // namespace
}  // namespace graintune::op
