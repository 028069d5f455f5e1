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

// A run with a practice lap: no run is recorded while its pods wait for the lap's answer; the
// answer is the run's value (read from the pod, graintune.dev/lap-value); a pod that ended
// without one ran admission's.
TEST(RunRecordsTest, APracticeLapsRunIsRecordedWithItsAnswer) {
  const json pod = json::parse(R"({"metadata": {"name": "p0", "uid": "u0",
      "annotations": {"graintune.dev/worker-count": "64", "graintune.dev/resume": "pins-workers",
                      "graintune.dev/checkpoint-dir": "/ckpt/r/checkpoints"}},
    "spec": {"containers": [{"name": "t", "command": ["/graintune-launcher/graintune-launcher",
             "--answer-wait=90s", "--", "python3", "-m", "MaxText.train"]}]},
    "status": {"phase": "Running"}})");
  PodFacts waiting = PodFactsFromJson(pod);
  ASSERT_TRUE(waiting.pins_workers);
  EXPECT_EQ(waiting.lap_answer_wait_seconds, 90);
  EXPECT_TRUE(waiting.AwaitsLapAnswer());
  EXPECT_TRUE(RunsStatus({}, {waiting}).empty());

  json answered_pod = pod;
  answered_pod["metadata"]["annotations"]["graintune.dev/lap-value"] = "7";
  const PodFacts answered = PodFactsFromJson(answered_pod);
  EXPECT_EQ(answered.workers, 7);
  EXPECT_EQ(answered.admission_workers, 64);
  EXPECT_FALSE(answered.AwaitsLapAnswer());
  std::vector<workload::RunStatus> runs = RunsStatus({}, {answered});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workers, 7);

  answered_pod["metadata"]["annotations"]["graintune.dev/lap-value"] = "none: the lap of p0 exited 1";
  runs = RunsStatus({}, {PodFactsFromJson(answered_pod)});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workers, 64);

  waiting.phase = "Failed";  // its launcher gave up waiting and ran admission's value
  runs = RunsStatus({}, {waiting});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workers, 64);
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
