// Whether the trainer's compile came from its practice lap's cache (lap_compile_cache.h).
#include "operator/lap_compile_cache.h"

#include <gtest/gtest.h>

namespace graintune::op {
namespace {

// One pod's answer: its lap's steps from step 0 (the first carrying the compile), and its
// trainer's, whose first step took `trainer_first` seconds.
telemetry::StepsDocument Answer(double lap_first, double trainer_first, long trainer_from = 0) {
  telemetry::StepsDocument doc;
  telemetry::LapReport lap;
  lap.steps = {{.step = 0, .step_time_seconds = lap_first}, {.step = 1, .step_time_seconds = 0.4}};
  lap.result = telemetry::LapResult{.completed = true, .outcome = "completed", .wall_seconds = 40, .steps = 2};
  doc.lap = lap;
  doc.steps = {{.step = trainer_from, .step_time_seconds = trainer_first},
               {.step = trainer_from + 1, .step_time_seconds = 0.4}};
  return doc;
}

TEST(CompileCacheTest, AFirstStepWellUnderTheLapsFoundItsCompileInTheCache) {
  const std::optional<CompileCacheVerdict> hit = CompileCacheOf(Answer(30, 2));
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->hit);
  EXPECT_EQ(hit->lap_first_step_seconds, 30);
  EXPECT_EQ(hit->trainer_first_step_seconds, 2);
  // A recompile takes about what the lap's compile took, either way of it.
  EXPECT_FALSE(CompileCacheOf(Answer(30, 28))->hit);
  EXPECT_FALSE(CompileCacheOf(Answer(30, 33))->hit);
  // The boundary is the documented share.
  EXPECT_TRUE(CompileCacheOf(Answer(30, 30 * kCompileCacheHitShare))->hit);
  EXPECT_FALSE(CompileCacheOf(Answer(30, 30 * kCompileCacheHitShare + 0.01))->hit);
}

TEST(CompileCacheTest, NoVerdictWithoutBothFirstSteps) {
  EXPECT_FALSE(CompileCacheOf(telemetry::StepsDocument{}));
  telemetry::StepsDocument no_trainer_steps = Answer(30, 2);
  no_trainer_steps.steps.clear();
  EXPECT_FALSE(CompileCacheOf(no_trainer_steps)) << "the trainer has not stepped yet";
  telemetry::StepsDocument no_lap = Answer(30, 2);
  no_lap.lap.reset();
  EXPECT_FALSE(CompileCacheOf(no_lap));
  telemetry::StepsDocument running = Answer(30, 2);
  running.lap->result.reset();
  EXPECT_FALSE(CompileCacheOf(running)) << "the lap still runs";
  telemetry::StepsDocument failed = Answer(30, 2);
  failed.lap->result->completed = false;
  EXPECT_FALSE(CompileCacheOf(failed)) << "a lap that failed filled no cache worth judging";
  telemetry::StepsDocument zero = Answer(0, 0);
  EXPECT_FALSE(CompileCacheOf(zero)) << "a lap step of no time says nothing";
  // The trainer's first step seen is not the one the lap started from (it resumed, or the
  // exporter dropped its first steps): nothing is known of its compile.
  EXPECT_FALSE(CompileCacheOf(Answer(30, 2, 40)));
}

}  // namespace
}  // namespace graintune::op
