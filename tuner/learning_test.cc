#include "tuner/learning.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

Trial Fed(int attempt, int workers, double tokens_per_second, double busy) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.tokens_per_second_per_host = tokens_per_second;
  t.step_spread = 0.01;
  t.samples = 50;
  t.worker_busy_fraction = busy;
  return t;
}

TEST(LearningTest, AStarvedTrialMeasuresTheRateExactly) {
  Trial starved = Fed(0, 4, 8000, -1);
  starved.step_spread = 0.8;  // data-bound
  const LearnedFigures l = LearnFromTrials({starved, Fed(1, 17, 15200, 0.4)});
  ASSERT_TRUE(l.tokens_per_second_per_worker);
  EXPECT_DOUBLE_EQ(*l.tokens_per_second_per_worker, 2000);
  EXPECT_EQ(l.rate_basis, "starved attempt 0");
  EXPECT_DOUBLE_EQ(*l.fed_tokens_per_second_per_host, 15200);
}

TEST(LearningTest, AFedTrialsBusyShareGivesALowerRateWithItsMargin) {
  const LearnedFigures l = LearnFromTrials({Fed(0, 20, 16000, 0.36)});
  ASSERT_TRUE(l.tokens_per_second_per_worker);
  // 16,000 / (20 x (0.36 + 0.04)) = 2,000, below the 2,222 the share alone says.
  EXPECT_DOUBLE_EQ(*l.tokens_per_second_per_worker, 2000);
  EXPECT_EQ(l.rate_basis, "busy share of attempt 0");
}

TEST(LearningTest, WithoutABusyShareAFedTrialTeachesNoRate) {
  const LearnedFigures l = LearnFromTrials({Fed(0, 20, 16000, -1)});
  EXPECT_FALSE(l.tokens_per_second_per_worker);
  EXPECT_TRUE(l.fed_tokens_per_second_per_host);
}

TEST(LearningTest, MemoryIsTheHighestPeakAndAnOomKillTeachesNothing) {
  Trial a = Fed(0, 8, 9000, 0.5);
  a.worker_memory_bytes = 2e9;
  Trial b = Fed(1, 12, 9000, 0.4);
  b.worker_memory_bytes = 2.5e9;
  Trial oom = Fed(2, 40, 0, -1);
  oom.oom_killed = true;
  oom.worker_memory_bytes = 9e9;
  const LearnedFigures l = LearnFromTrials({a, b, oom});
  EXPECT_DOUBLE_EQ(*l.worker_memory_bytes, 2.5e9);
  EXPECT_EQ(l.rate_basis, "busy share of attempt 1");
  EXPECT_FALSE(LearnFromTrials({oom}).worker_memory_bytes);
  EXPECT_FALSE(LearnFromTrials({}).tokens_per_second_per_worker);
}

}  // namespace
}  // namespace graintune
