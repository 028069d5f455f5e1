#include "tuner/pipeline_simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace graintune {
namespace {

// Mean of steps [first, last] (1-based, inclusive), averaged over `seeds` runs.
double MeanSteps(int workers, int steps, int first, int last, int seeds = 5) {
  PipelineParams p = SeedCalibratedParams();
  p.workers = workers;
  double total = 0;
  for (int s = 0; s < seeds; ++s) {
    SimulationResult r = Simulate(p, steps, 7 + s);
    total += std::accumulate(r.step_seconds.begin() + first - 1, r.step_seconds.begin() + last,
                             0.0) /
             (last - first + 1);
  }
  return total / seeds;
}

TEST(PipelineSimulatorTest, OneWorkerCrawlsAtAbout30Seconds) {
  EXPECT_NEAR(MeanSteps(1, 10, 3, 10), 30.5, 3.0);
}

TEST(PipelineSimulatorTest, TwoWorkersAverage15WithSlowNearZeroPairs) {
  // The measured steps 3-10 average 12.1 s (the buffer filled during compilation helps early);
  // in steady state two workers deliver a batch every 15 s.
  EXPECT_NEAR(MeanSteps(2, 10, 3, 10), 12.1, 2.5);
  EXPECT_NEAR(MeanSteps(2, 60, 11, 60), 15.0, 1.5);
  PipelineParams p = SeedCalibratedParams();
  p.workers = 2;
  SimulationResult r = Simulate(p, 10, 7);
  int near_zero = 0, slow = 0;
  for (size_t i = 2; i < r.step_seconds.size(); ++i) {
    near_zero += r.step_seconds[i] < 2.0;
    slow += r.step_seconds[i] > 20.0;
  }
  EXPECT_GE(near_zero, 2);
  EXPECT_GE(slow, 2);
}

TEST(PipelineSimulatorTest, FourWorkersLookFedForTenStepsThenStall) {
  // What a 10-step run shows: ~4.3 s steps while the prefetch buffer lasts.
  EXPECT_NEAR(MeanSteps(4, 60, 3, 8), 4.3, 0.5);
  // Steady state, once the buffer has drained: data-bound at 4 x 2.15k tok/s.
  EXPECT_NEAR(MeanSteps(4, 60, 21, 60), 30.0 / 4, 1.0);
}

TEST(PipelineSimulatorTest, EightWorkersRunAt43Throughout) {
  EXPECT_NEAR(MeanSteps(8, 60, 3, 60), 4.3, 0.1);
  PipelineParams p = SeedCalibratedParams();
  p.workers = 8;
  SimulationResult r = Simulate(p, 60, 3);
  EXPECT_LT(*std::max_element(r.step_seconds.begin() + 3, r.step_seconds.end()), 4.6);
  EXPECT_LT(r.data_wait_fraction, 0.6);  // the first batch's wait only
}

TEST(PipelineSimulatorTest, FirstStepIncludesCompilation) {
  PipelineParams p = SeedCalibratedParams();
  p.workers = 8;
  SimulationResult r = Simulate(p, 5, 1);
  EXPECT_GT(r.step_seconds[0], p.compile_seconds);
  EXPECT_LT(r.step_seconds[1], 1.0);  // the asynchronous-dispatch artefact
}

TEST(PipelineSimulatorTest, MemoryAboveTheHostIsOom) {
  PipelineParams p = SeedCalibratedParams();
  p.workers = 64;
  p.worker_memory_bytes = 12.0 * 1024 * 1024 * 1024;
  SimulationResult r = Simulate(p, 10, 1);
  EXPECT_TRUE(r.oom);
  EXPECT_TRUE(r.step_seconds.empty());
  EXPECT_EQ(SteadyTokensPerSecond(p, 10, 1), 0);
  p.workers = 32;
  EXPECT_FALSE(Simulate(p, 10, 1).oom);
}

TEST(PipelineSimulatorTest, CpuContentionCostsThroughput) {
  PipelineParams p = SeedCalibratedParams();
  p.host_cpu_cores = 16;
  p.trainer_cpu_cores = 4;
  p.tokens_per_second_per_worker = 1500;  // 11 workers feed the chips; 12 cores are free
  p.workers = 12;
  const double at_free_cores = SteadyTokensPerSecond(p, 200, 1);
  EXPECT_NEAR(at_free_cores, 65536 / 4.3, 65536 / 4.3 * 0.02);
  p.workers = 48;
  const double oversubscribed = SteadyTokensPerSecond(p, 200, 1);
  // 48 workers on 12 free cores take the trainer's share: every step slows down.
  EXPECT_LT(oversubscribed, at_free_cores * 0.5);
}

TEST(PipelineSimulatorTest, DeterministicPerSeed) {
  PipelineParams p = SeedCalibratedParams();
  p.workers = 3;
  EXPECT_EQ(Simulate(p, 30, 42).step_seconds, Simulate(p, 30, 42).step_seconds);
  EXPECT_NE(Simulate(p, 30, 42).step_seconds, Simulate(p, 30, 43).step_seconds);
}

// A fed run's workers are busy what the demand asks of them: 65,536 tokens every 4.3 s over
// 64 workers of ~2,185 tok/s each is ~11% of the time. Counting the batches they refill after
// the last step, a short run (fewer steps than workers x (buffer + 1)) reads that too; without
// them it reads its workers idle while they refill.
TEST(PipelineSimulatorTest, TheBusyShareCountsTheBatchesWorkersRefill) {
  PipelineParams p = SeedCalibratedParams();
  p.workers = 64;
  const double asked = p.tokens_per_step / p.compute_step_seconds /
                       (p.workers * p.tokens_per_second_per_worker);
  const SimulationResult lap = Simulate(p, 160, 11);
  EXPECT_NEAR(lap.worker_busy_fraction_with_work_ahead, asked, 0.2 * asked);
  EXPECT_LT(lap.worker_busy_fraction, 0.5 * asked);
  const SimulationResult run = Simulate(p, 1280, 11);
  EXPECT_NEAR(run.worker_busy_fraction_with_work_ahead, asked, 0.1 * asked);
  EXPECT_GE(run.worker_busy_fraction_with_work_ahead, run.worker_busy_fraction);
}

}  // namespace
}  // namespace graintune
