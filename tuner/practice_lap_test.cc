#include "tuner/practice_lap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tuner/machine_types.h"

namespace graintune {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The request's job as admission sees it: Llama3-8B on a v6e-32 host (ct6e-standard-4t), batch
// 2 x 8192, raw text with no annotation, the step estimated from FLOPs, the value kept for a run.
TuningInputs RequestInputs() {
  TuningInputs in;
  in.host = HostShapeOf(*FindMachineType("ct6e-standard-4t"));
  WorkloadShape w;
  w.model_name = "llama3-8b";
  w.per_device_batch_size = 2;
  w.max_target_length = 8192;
  in.demand = *EstimateDemand(w, in.host);
  in.profile = DefaultProfile(DatasetKind::kRawText);
  in.policy.max_workers = 64;
  in.lifetime = ValueLifetime::kRun;
  return in;
}

LapFigures TrainingLap(int workers, double step_seconds, double busy) {
  LapFigures lap;
  lap.workers = workers;
  lap.step_seconds = step_seconds;
  lap.steady_steps = 19;
  lap.step_spread = 0.01;
  lap.worker_busy_fraction = busy;
  lap.worker_memory_bytes = 1.5 * kGiB;
  return lap;
}

TEST(PracticeLapTest, TheRequestsJobGetsTheWorkersItsLapShowsItNeeds) {
  const TuningInputs in = RequestInputs();
  ASSERT_EQ(in.demand.tokens_per_step_per_host, 65536);
  // Admission's value for this run, before anything is measured: the policy's cap.
  ASSERT_EQ(Decide(in, {}).workers, 64);
  // A lap with those 64 workers: 4.3 s a step, the workers busy 6% of the time. The request
  // measured 4 workers starved and 8 fed at 4.3 s.
  const std::vector<LapFigures> laps(8, TrainingLap(64, 4.3, 0.06));
  Result<Decision> d = DecideFromLaps(in, laps, 8);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_GE(d->workers, 5) << d->reason;
  EXPECT_LE(d->workers, 11) << d->reason;
  EXPECT_NE(d->reason.find("practice lap (training, 8 hosts"), std::string::npos) << d->reason;
  EXPECT_NE(d->reason.find("64 workers, 4.30 s/step, busy 0.06"), std::string::npos) << d->reason;
}

// The lap's deadline covers a first compile and its steps at the estimated step with room to
// spare, so a lap that runs as estimated is never cut short; it is never under a minute nor over
// an hour.
TEST(PracticeLapTest, ALapsDeadlineCoversItsStepsAtTheEstimatedStep) {
  TuningInputs in = RequestInputs();
  const int steps = 200;
  EXPECT_GT(LapTimeoutSeconds(in, steps), LapExpectedSeconds(in, steps));
  EXPECT_GE(LapTimeoutSeconds(in, steps), kLapCompileSeconds + steps * in.demand.compute_step_seconds);
  in.demand.compute_step_seconds = 0.001;
  EXPECT_EQ(LapTimeoutSeconds(in, kMinLapSteps), 301);  // the compile's allowance, rounded up
  in.demand.compute_step_seconds = 60;
  EXPECT_EQ(LapTimeoutSeconds(in, kMaxLapSteps), 3600);
}

// A lap's cost to its run, and the policy's cap on it: the request's job (2,000 steps on a
// v6e-32 slice of 8 hosts x 4 chips) at the lap's own size, and a lap the cap allows.
TEST(PracticeLapTest, ALapsCostIsItsShareOfTheRunAndThePolicyCapsIt) {
  const TuningInputs in = RequestInputs();
  const LapCost big = LapCostOf(in, 413, 2000, 8);
  ASSERT_TRUE(big.run_share && big.chip_hours);
  EXPECT_NEAR(*big.run_share, 0.2065, 1e-9);
  EXPECT_EQ(big.chips, 32);
  EXPECT_NEAR(*big.chip_hours, big.seconds * 32 / 3600, 1e-9);
  EXPECT_EQ(big.Describe().rfind("20.6% of the run's 2000 steps, about ", 0), 0u) << big.Describe();
  EXPECT_NE(big.Describe().find(" chip-hours of the slice's 32 chips"), std::string::npos) << big.Describe();
  LapPolicy policy;  // the default cap: 3% of the run
  const std::optional<std::string> refused = LapRefusal(big, policy);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("over the policy's lap.maxRunShare of 3.0% (60 steps)"), std::string::npos) << *refused;
  EXPECT_FALSE(LapRefusal(LapCostOf(in, 60, 2000, 8), policy));  // exactly the cap
  EXPECT_TRUE(LapRefusal(LapCostOf(in, 61, 2000, 8), policy));
  policy.max_run_share = 0.25;
  EXPECT_FALSE(LapRefusal(big, policy));
  // A run of unknown length: its share cannot be bounded, so no lap, and the reason says why.
  const LapCost unknown = LapCostOf(in, 20, std::nullopt, std::nullopt);
  EXPECT_FALSE(unknown.run_share || unknown.chip_hours);
  const std::optional<std::string> why = LapRefusal(unknown, policy);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("the run's steps are unknown"), std::string::npos) << *why;
  EXPECT_EQ(unknown.Describe().rfind("20 steps of a run of unknown length, about ", 0), 0u) << unknown.Describe();
}

TEST(PracticeLapTest, TheSlowestHostFeedsTheSlice) {
  const TuningInputs in = RequestInputs();
  const LapFigures fast = TrainingLap(64, 4.3, 0.06);
  const LapFigures slow = TrainingLap(64, 4.3, 0.12);  // its workers deliver half as much each
  Result<Decision> alone = DecideFromLaps(in, {slow}, 1);
  Result<Decision> both = DecideFromLaps(in, {fast, slow, fast}, 3);
  Result<Decision> fast_only = DecideFromLaps(in, {fast}, 1);
  ASSERT_TRUE(alone.ok() && both.ok() && fast_only.ok());
  EXPECT_EQ(both->workers, alone->workers) << both->reason;
  EXPECT_GT(both->workers, fast_only->workers) << fast_only->reason;
  EXPECT_NE(both->reason.find("slowest host 1"), std::string::npos) << both->reason;
}

TEST(PracticeLapTest, TheHighestMemoryAnyHostShowedSetsTheMemoryBudget) {
  const TuningInputs in = RequestInputs();
  LapFigures small = TrainingLap(64, 4.3, 0.06);
  LapFigures big = small;
  big.worker_memory_bytes = 20 * kGiB;
  Result<Decision> d = DecideFromLaps(in, {small, big}, 2);
  ASSERT_TRUE(d.ok()) << d.error();
  // 10% over the measured peak, plus one batch held.
  EXPECT_NEAR(d->budgets.per_worker_memory_bytes, 1.1 * 20 * kGiB + in.demand.element_bytes, 1);
  EXPECT_LE(d->workers * d->budgets.per_worker_memory_bytes, in.host.memory_bytes);
}

TEST(PracticeLapTest, AStarvedLapMeasuresTheRateAndAsksForMore) {
  TuningInputs in = RequestInputs();
  // 4 workers, data-bound as in the request's 4-worker block: 7.4 s steps, busy all the time.
  LapFigures lap = TrainingLap(4, 7.4, 0.98);
  lap.draining = true;
  Result<Decision> d = DecideFromLaps(in, {lap}, 1);
  ASSERT_TRUE(d.ok()) << d.error();
  // 65536 / 7.4 / (4 x (0.98 + kLapBusyShareMargin)) = 2.2k tok/s per worker: the estimated
  // demand needs far more than 4.
  EXPECT_GT(d->workers, 4) << d->reason;
  EXPECT_NEAR(d->per_worker_tokens_per_second, 65536 / 7.4 / (4 * (0.98 + kLapBusyShareMargin)), 1)
      << d->reason;
}

TEST(PracticeLapTest, ADataOnlyLapMeasuresSupplyAndSizesTheEstimatedDemand) {
  const TuningInputs in = RequestInputs();
  LapFigures lap = TrainingLap(16, 1.0, 0.96);  // 16 workers: a 65536-token batch a second
  lap.kind = LapKind::kDataOnly;
  Result<Decision> d = DecideFromLaps(in, {lap}, 1);
  ASSERT_TRUE(d.ok()) << d.error();
  // 65536 / (16 x (0.96 + kLapBusyShareMargin)) tok/s per worker; the estimated demand at the
  // high-end MFU (a run keeps its value) over it, x1.4 for a known rate.
  const double rate = 65536.0 / (16 * (0.96 + kLapBusyShareMargin));
  EXPECT_NEAR(d->per_worker_tokens_per_second, rate, 1);
  const double demand = in.demand.tokens_per_second_per_host * kHighEndMfu / kAssumedMfu;
  EXPECT_EQ(d->workers, static_cast<int>(std::ceil(demand / rate * kRunSafety))) << d->reason;
  EXPECT_NE(d->reason.find("practice lap (data only, 1 host: 16 workers, 1.00 s/batch"),
            std::string::npos) << d->reason;
}

TEST(PracticeLapTest, TheValueIsForTheWholeRunWhateverTheInputsSaid) {
  TuningInputs in = RequestInputs();
  const LapFigures lap = TrainingLap(64, 4.3, 0.06);
  Result<Decision> run = DecideFromLaps(in, {lap}, 1);
  in.lifetime = ValueLifetime::kAttempt;
  Result<Decision> attempt = DecideFromLaps(in, {lap}, 1);
  ASSERT_TRUE(run.ok() && attempt.ok());
  EXPECT_EQ(run->workers, attempt->workers);
  EXPECT_EQ(run->reason, attempt->reason);
}

// Every way a lap gives no value: the caller keeps admission's.
TEST(PracticeLapTest, FailuresAndBadFiguresGiveNoLapValue) {
  const TuningInputs in = RequestInputs();
  const LapFigures good = TrainingLap(64, 4.3, 0.06);
  auto no_value = [&](std::vector<LapFigures> laps, int hosts, const std::string& why) {
    Result<Decision> d = DecideFromLaps(in, laps, hosts);
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_NE(d.error().find("no lap value"), std::string::npos) << d.error();
    EXPECT_NE(d.error().find(why), std::string::npos) << d.error();
  };
  LapFigures failed = good;
  failed.failed = true;
  no_value({good, failed}, 2, "host 1: its lap failed");
  no_value({good}, 2, "1 of 2 hosts");
  no_value({}, 1, "0 of 1 hosts");
  no_value({good, good}, 1, "2 of 1 hosts");
  no_value({}, 0, "an attempt of 0 hosts");
  no_value({}, kMaxLapHosts + 1, "an attempt of");
  LapFigures bad = good;
  bad.step_seconds = std::numeric_limits<double>::quiet_NaN();
  no_value({bad}, 1, "no steady step time");
  bad = good;
  bad.step_seconds = 0;
  no_value({bad}, 1, "no steady step time");
  bad = good;
  bad.steady_steps = 3;
  no_value({bad}, 1, "fewer than 4 steady steps");
  bad = good;
  bad.workers = 0;
  no_value({bad}, 1, "workers outside");
  bad = good;
  bad.worker_busy_fraction = 1.5;
  no_value({bad}, 1, "busy share");
  bad = good;
  bad.worker_busy_fraction = std::numeric_limits<double>::infinity();
  no_value({bad}, 1, "busy share");
  bad = good;
  bad.worker_memory_bytes = 2 * in.host.memory_bytes;
  no_value({bad}, 1, "memory beyond the host's");
  bad = good;
  bad.trainer_cpu_cores = 10 * in.host.cpu_cores;
  no_value({bad}, 1, "trainer cores");
  bad = good;
  bad.kind = LapKind::kDataOnly;
  no_value({good, bad}, 2, "different laps");
}

TEST(PracticeLapTest, ATrialBecomesALapWithItsFigures) {
  Trial t;
  t.workers = 12;
  t.samples = 20;
  t.step_seconds_mean = 4.4;
  t.step_spread = 0.02;
  t.worker_busy_fraction = 0.3;
  t.worker_memory_bytes = kGiB;
  const LapFigures lap = LapFiguresOf(t, LapKind::kDataOnly);
  EXPECT_EQ(lap.kind, LapKind::kDataOnly);
  EXPECT_EQ(lap.workers, 12);
  EXPECT_EQ(lap.steady_steps, 20);
  EXPECT_EQ(lap.step_seconds, 4.4);
  EXPECT_EQ(lap.worker_busy_fraction, 0.3);
  EXPECT_EQ(lap.worker_memory_bytes, kGiB);
  EXPECT_FALSE(lap.failed);
  t.oom_killed = true;
  EXPECT_TRUE(LapFiguresOf(t, LapKind::kTraining).failed);
}

// The lap lasts until every worker filled its buffer at the slowest plausible rate, twice over,
// at the shortest step the estimate allows.
TEST(PracticeLapTest, TheLapLastsUntilTheWorkersFilledTheirBuffers) {
  TuningInputs in = RequestInputs();
  const Decision admission = Decide(in, {});
  const double fill = 5 + (admission.per_worker_buffer + 1) * 65536.0 /
                              PlausibleRates(DatasetKind::kRawText).low;
  const double step = in.demand.compute_step_seconds * kAssumedMfu / kHighEndMfu;
  EXPECT_EQ(LapSteps(in, admission), static_cast<int>(std::ceil(2 + 2 * fill / step)));
  // A known (annotated) rate needs a shorter lap than the low end of the kind.
  in.profile = ProfileWithOverrides(DatasetKind::kRawText, 6000, std::nullopt);
  EXPECT_LT(LapSteps(in, admission), static_cast<int>(std::ceil(2 + 2 * fill / step)));
  // Bounded both ways.
  in.demand.compute_step_seconds = 1e-4;
  EXPECT_EQ(LapSteps(in, admission), kMaxLapSteps);
  in.demand.compute_step_seconds = 1e6;
  EXPECT_EQ(LapSteps(in, admission), kMinLapSteps);
}

}  // namespace
}  // namespace graintune
