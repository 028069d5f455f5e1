#include "tuner/trial.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

TEST(TrialTest, FedRunIsSteadyAndNotDataBound) {
  std::vector<double> steps = {47.6, 0.3, 7.7};
  for (int i = 0; i < 20; ++i) steps.push_back(4.3 + 0.01 * (i % 3));
  Result<Trial> t = SummarizeSteps(steps, 65536);
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_NEAR(t->step_seconds_p50, 4.31, 0.02);
  EXPECT_NEAR(t->tokens_per_second_per_host, 65536 / 4.31, 30);
  EXPECT_FALSE(IsDataBound(*t));
  EXPECT_LT(t->stall_fraction, 0.01);
}

TEST(TrialTest, SlowNearZeroPairsAreDataBoundAndAveragedRight) {
  // The measured 2-worker shape: a slow step, then one whose batch was already waiting.
  std::vector<double> steps = {58.3, 0.2};
  for (int i = 0; i < 10; ++i) {
    steps.push_back(29.9);
    steps.push_back(0.007);
  }
  Result<Trial> t = SummarizeSteps(steps, 65536);
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->step_seconds_mean, 14.95, 0.01);  // the mean is right, the p50 alone is not
  EXPECT_TRUE(IsDataBound(*t));
  EXPECT_GT(t->stall_fraction, 0.9);
}

TEST(TrialTest, DrainingPrefetchIsDataBound) {
  // The 4-worker shape over a longer run: fast while the buffer lasts, then slower.
  std::vector<double> steps = {55.3, 0.2};
  for (int i = 0; i < 8; ++i) steps.push_back(4.3);
  for (int i = 0; i < 8; ++i) steps.push_back(7.6);
  Result<Trial> t = SummarizeSteps(steps, 65536);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->draining);
  EXPECT_TRUE(IsDataBound(*t));
}

TEST(TrialTest, RejectsTooFewOrBadSteps) {
  EXPECT_FALSE(SummarizeSteps({1, 2, 3}, 100).ok());
  std::vector<double> steps(12, 4.0);
  steps[5] = -1;
  EXPECT_FALSE(SummarizeSteps(steps, 100).ok());
  steps[5] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(SummarizeSteps(steps, 100).ok());
}

}  // namespace
}  // namespace graintune
