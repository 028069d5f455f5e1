#include "tuner/calibration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace graintune {
namespace {

std::string ReadSeedCsv() {
  std::ifstream in(GRAINTUNE_MEASURED_STEPS_CSV);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CalibrationTest, ParsesTheSeedCsv) {
  Result<std::vector<ObservedRun>> runs = ParseStepCsv(ReadSeedCsv());
  ASSERT_TRUE(runs.ok()) << runs.error() << " (looked in " GRAINTUNE_MEASURED_STEPS_CSV ")";
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].workers, 1);
  EXPECT_EQ((*runs)[3].workers, 8);
  EXPECT_EQ((*runs)[0].step_seconds.size(), 10u);
  EXPECT_DOUBLE_EQ((*runs)[0].step_seconds[0], 61.1);
}

TEST(CalibrationTest, RejectsMalformedCsv) {
  EXPECT_FALSE(ParseStepCsv("").ok());
  EXPECT_FALSE(ParseStepCsv("1,2,3\n").ok());
  EXPECT_FALSE(ParseStepCsv("a,b,c,d\n").ok());
}

TEST(CalibrationTest, FindsTheBuiltInSeedParameters) {
  Result<std::vector<ObservedRun>> runs = ParseStepCsv(ReadSeedCsv());
  ASSERT_TRUE(runs.ok());
  Result<CalibrationResult> fit = Calibrate(*runs, SeedCalibratedParams());
  ASSERT_TRUE(fit.ok()) << fit.error();
  const PipelineParams& built_in = SeedCalibratedParams();
  // The simulator's defaults are the figures this calibration finds.
  EXPECT_NEAR(fit->params.tokens_per_second_per_worker, built_in.tokens_per_second_per_worker,
              built_in.tokens_per_second_per_worker * 0.02);
  EXPECT_NEAR(fit->params.compile_seconds, built_in.compile_seconds, 2.5);
  EXPECT_NEAR(fit->params.compute_step_seconds, built_in.compute_step_seconds, 0.05);
  EXPECT_NEAR(fit->params.worker_jitter_cv, built_in.worker_jitter_cv, 1e-9);
  EXPECT_LT(fit->error, 0.25);
}

}  // namespace
}  // namespace graintune
