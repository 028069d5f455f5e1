#include "tuner/decision.h"

#include <gtest/gtest.h>

#include "tuner/machine_types.h"

namespace graintune {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The measured setup: Llama3-8B on ct6e-standard-4t, batch 2 x 8192, raw text, 4.3 s steps.
TuningInputs SeedInputs() {
  TuningInputs in;
  in.host = HostShapeOf(*FindMachineType("ct6e-standard-4t"));
  WorkloadShape w;
  w.model_name = "llama3-8b";
  w.per_device_batch_size = 2;
  w.max_target_length = 8192;
  w.step_seconds = 4.3;
  in.demand = *EstimateDemand(w, in.host);
  in.profile = ProfileWithOverrides(DatasetKind::kRawText, 2100, 2 * kGiB);
  return in;
}

Trial MakeTrial(int attempt, int workers, double tokens_per_second, bool data_bound) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.tokens_per_second_per_host = tokens_per_second;
  t.step_seconds_mean = 65536 / tokens_per_second;
  t.step_spread = data_bound ? 0.8 : 0.01;
  t.samples = 50;
  return t;
}

// A host an object claims is absurd (a cpu limit of "20P", petabytes of memory, one byte per
// worker): the budgets stay counts, and the value stays within the policy (found by the
// admission fuzzer, where the conversion to int was undefined).
TEST(DecisionTest, AbsurdHostFiguresStayWithinThePolicy) {
  TuningInputs in = SeedInputs();
  in.host.cpu_cores = 2e16;
  in.host.memory_bytes = 4e20;
  in.profile = ProfileWithOverrides(DatasetKind::kRawText, 2100, 1);
  in.demand.element_bytes = 0;
  const Decision d = Decide(in, {});
  EXPECT_GE(d.workers, 1);
  EXPECT_LE(d.workers, in.policy.max_workers);
  EXPECT_EQ(d.budgets.cpu, 1000000);
  EXPECT_EQ(d.budgets.memory, 1000000);
}

TEST(DecisionTest, AFedTrialAtTheBufferedPaceIsFedEvenBelowAnOptimisticEstimate) {
  TuningInputs in = SeedInputs();
  in.demand.tokens_per_second_per_host = 27000;  // estimated at 40% MFU: 2.43 s a step
  Trial starved = MakeTrial(0, 4, 65536 / 7.4, true);
  starved.buffered_step_seconds = 4.3;  // while the buffer lasted, steps took 4.3 s
  Trial fed = MakeTrial(1, 13, 65536 / 4.3, false);
  fed.step_seconds_p50 = 4.31;
  Decision d = Decide(in, {starved, fed});
  // Fed at 15.2k tok/s, the measured demand: 15.2k / 2.2k per worker x1.4 -> 10, not 13 and
  // not what the 27k estimate would ask.
  EXPECT_EQ(d.workers, 10) << d.reason;
  EXPECT_EQ(d.phase, Phase::kExploring) << d.reason;  // 10 is untried
  EXPECT_NE(d.reason.find("measured demand 15.2k tok/s/host"), std::string::npos) << d.reason;
  // Without the buffered pace the same trials ask for another, larger attempt.
  starved.buffered_step_seconds = 0;
  Decision blind = Decide(in, {starved, fed});
  EXPECT_EQ(blind.phase, Phase::kExploring);
  EXPECT_GT(blind.workers, 13);
}

// The request's case: 4 workers starved, 17 fed. The chips need ~7 workers' output.
std::vector<Trial> StarvedThenSeventeenFed() {
  return {MakeTrial(0, 4, 65536 / 7.4, true), MakeTrial(1, 17, 65536 / 4.3, false)};
}

TEST(DecisionTest, AFedTrialIsTrimmedToTheMeasuredNeed) {
  Decision d = Decide(SeedInputs(), StarvedThenSeventeenFed());
  EXPECT_EQ(d.workers, 10) << d.reason;  // 15.2k / 2.2k = 6.9, x1.4 -> 10
  EXPECT_EQ(d.phase, Phase::kExploring);
}

TEST(DecisionTest, ATrimThatFedConverges) {
  std::vector<Trial> trials = StarvedThenSeventeenFed();
  trials.push_back(MakeTrial(2, 10, 65536 / 4.3, false));
  Decision d = Decide(SeedInputs(), trials);
  EXPECT_EQ(d.workers, 10) << d.reason;
  EXPECT_EQ(d.phase, Phase::kConverged);
}

TEST(DecisionTest, ATrimThatStarvedIsUndone) {
  std::vector<Trial> trials = StarvedThenSeventeenFed();
  trials.push_back(MakeTrial(2, 10, 65536 / 5.0, true));  // 10 workers: 5.0 s steps, starved
  Decision d = Decide(SeedInputs(), trials);
  // At 10 workers each delivered 1.3k tok/s: 15.2k / 1.3k x1.4 -> 17, the fed count.
  EXPECT_EQ(d.workers, 17) << d.reason;
  EXPECT_EQ(d.phase, Phase::kConverged);
  EXPECT_NE(d.reason.find("10 workers starved"), std::string::npos) << d.reason;
}

TEST(DecisionTest, ATrimStaysAboveACountThatStarved) {
  // 40 workers fed with time to spare (busy 20%: 8 busy workers' worth), 9 measured starved at
  // a rate that would call for fewer: the trim stays above 9.
  Trial fed = MakeTrial(0, 40, 65536 / 4.3, false);
  fed.worker_busy_fraction = 0.2;
  Trial starved = MakeTrial(1, 9, 65536 / 4.5, true);
  Decision d = Decide(SeedInputs(), {fed, starved});
  EXPECT_GE(d.workers, 10) << d.reason;
  EXPECT_LT(d.workers, 40) << d.reason;
}

TEST(DecisionTest, ATrimSavingLessThanATenthIsNotWorthAnAttempt) {
  // 4 starved at 2.2k per worker; 11 fed: 10 would save one worker in eleven, under a tenth.
  Decision d = Decide(SeedInputs(), {MakeTrial(0, 4, 65536 / 7.4, true), MakeTrial(1, 11, 65536 / 4.3, false)});
  EXPECT_EQ(d.workers, 11) << d.reason;
  EXPECT_EQ(d.phase, Phase::kConverged);
}

TEST(DecisionTest, FirstPickFeedsTheChipsWithTheReasonSpelledOut) {
  Decision d = Decide(SeedInputs(), {});
  // 15.2k / 2.1k = 7.26, x1.25 = 9.07 -> 10.
  EXPECT_EQ(d.workers, 10);
  EXPECT_EQ(d.phase, Phase::kExploring);
  EXPECT_NE(d.reason.find("demand 15.2k tok/s/host"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("2.1k tok/s per worker (annotated)"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("cpu budget 171"), std::string::npos) << d.reason;  // 170.6 cores left
  EXPECT_NE(d.reason.find("-> 10"), std::string::npos) << d.reason;
}

// The cpu budget rounds the cores left to the nearest worker: on a small host, a worker with
// three quarters of a core adds throughput (real Grain, bench/real_grain), one with a third
// does not count.
TEST(DecisionTest, CpuBudgetRoundsToTheNearestWorker) {
  TuningInputs in = SeedInputs();
  in.host.cpu_cores = 2;
  for (auto [reserved, budget] : {std::pair{0.25, 2}, {0.6, 1}, {1.4, 1}, {1.7, 0}, {3.0, 0}}) {
    in.policy.reserved_cpu_cores = reserved;
    const Budgets b = ComputeBudgets(in);
    EXPECT_EQ(b.cpu, budget) << "reserved " << reserved;
    EXPECT_GE(b.ceiling, 1);  // never zero workers
  }
}

TEST(DecisionTest, UnknownEverythingIsStillSoundNeverOne) {
  TuningInputs in;
  in.host = HostShapeOf(*FindMachineType("ct5lp-hightpu-4t"));
  in.demand = *EstimateDemand(WorkloadShape{}, in.host);
  in.profile = DefaultProfile(DatasetKind::kRawText);
  Decision d = Decide(in, {});
  EXPECT_GT(d.workers, 1);
  EXPECT_LE(d.workers, d.budgets.ceiling);
}

TEST(DecisionTest, BoundedByCpuMemoryAndPolicy) {
  TuningInputs in = SeedInputs();
  in.profile.tokens_per_second_per_worker = 100;  // would need ~190 workers
  Decision d = Decide(in, {});
  EXPECT_EQ(d.workers, d.budgets.cpu);
  in.profile.worker_memory_bytes = 40 * kGiB;  // memory binds first
  d = Decide(in, {});
  EXPECT_EQ(d.workers, d.budgets.memory);
  EXPECT_LT(d.budgets.memory, d.budgets.cpu);
  in.policy.max_workers = 6;
  d = Decide(in, {});
  EXPECT_EQ(d.workers, 6);
  EXPECT_NE(d.reason.find("policy max 6"), std::string::npos) << d.reason;
}

TEST(DecisionTest, DataBoundTrialJumpsToWhatTheMeasurementImplies) {
  TuningInputs in = SeedInputs();
  // Attempt 0 ran 2 workers (a policy max too low), data-bound at 4.3k tok/s: 2.15k/worker.
  Decision d = Decide(in, {MakeTrial(0, 2, 4300, true)});
  // 15.24k / 2.15k = 7.09, x1.25 -> 9: one jump, not +1.
  EXPECT_EQ(d.workers, 9);
  EXPECT_EQ(d.phase, Phase::kExploring);
  EXPECT_NE(d.reason.find("(data-bound)"), std::string::npos) << d.reason;
}

TEST(DecisionTest, FedTrialConverges) {
  TuningInputs in = SeedInputs();
  std::vector<Trial> trials = {MakeTrial(0, 2, 4300, true), MakeTrial(1, 9, 15240, false)};
  Decision d = Decide(in, trials);
  EXPECT_EQ(d.workers, 9);
  EXPECT_EQ(d.phase, Phase::kConverged);
}

TEST(DecisionTest, DifferencesWithinNoiseAreNotChased) {
  TuningInputs in = SeedInputs();
  // 16 workers reached 15.0k; 24 reached 15.2k (1.3% more): keep 16.
  std::vector<Trial> trials = {MakeTrial(0, 16, 15000, false), MakeTrial(1, 24, 15200, false)};
  Decision d = Decide(in, trials);
  EXPECT_EQ(d.workers, 16);
  EXPECT_EQ(d.phase, Phase::kConverged);
}

TEST(DecisionTest, OomCapsBelowTheKilledCount) {
  TuningInputs in = SeedInputs();
  Trial oom;
  oom.attempt = 0;
  oom.workers = 10;
  oom.oom_killed = true;
  Decision d = Decide(in, {oom});
  EXPECT_LT(d.workers, 10);
  EXPECT_NE(d.reason.find("OOMKilled with 10 workers"), std::string::npos) << d.reason;
  // Even when a later data-bound trial asks for more, the cap holds.
  d = Decide(in, {oom, MakeTrial(1, 4, 8600, true)});
  EXPECT_LT(d.workers, 10);
}

TEST(DecisionTest, DataBoundAtTheCeilingConverges) {
  TuningInputs in = SeedInputs();
  in.policy.max_workers = 4;
  Decision d = Decide(in, {MakeTrial(0, 4, 8600, true)});
  EXPECT_EQ(d.workers, 4);
  EXPECT_EQ(d.phase, Phase::kConverged);
  EXPECT_NE(d.reason.find("cannot gain"), std::string::npos) << d.reason;
}

TEST(DecisionTest, StillDataBoundAboveEstimateKeepsClimbing) {
  TuningInputs in = SeedInputs();
  // Data-bound at 16k tok/s although the estimate says 15.2k: the chips are faster.
  Decision d = Decide(in, {MakeTrial(0, 8, 16000, true)});
  EXPECT_GE(d.workers, 16);
  EXPECT_EQ(d.phase, Phase::kExploring);
}

TEST(DecisionTest, FewestWorkersObjectiveTrimsOnMeasuredRate) {
  TuningInputs in = SeedInputs();
  in.policy.objective = Objective::kFewestWorkers;
  std::vector<Trial> trials = {MakeTrial(0, 4, 8600, true), MakeTrial(1, 16, 15240, false)};
  Decision d = Decide(in, trials);
  EXPECT_LT(d.workers, 16);
  EXPECT_GT(d.workers, 4);
}

TEST(DecisionTest, InconclusiveTrialsAreIgnored) {
  TuningInputs in = SeedInputs();
  Trial short_run = MakeTrial(0, 2, 4300, true);
  short_run.samples = 2;
  EXPECT_EQ(Decide(in, {short_run}).workers, Decide(in, {}).workers);
}

// A policy's minWorkers holds for every value it decides: the chips fed by fewer workers than the
// minimum keep the minimum, for the next attempt and for a whole run alike.
TEST(DecisionTest, APolicyMinimumHoldsWhenFewerWorkersFedTheChips) {
  TuningInputs in = SeedInputs();
  const Trial fed = MakeTrial(0, 2, 65536 / 4.3, false);
  EXPECT_EQ(Decide(in, {fed}).workers, 2);
  in.policy.min_workers = 5;
  for (const ValueLifetime lifetime : {ValueLifetime::kAttempt, ValueLifetime::kRun}) {
    in.lifetime = lifetime;
    const Decision d = Decide(in, {fed});
    EXPECT_EQ(d.workers, 5) << d.reason;
    EXPECT_NE(d.reason.find("policy min 5"), std::string::npos) << d.reason;
  }
}

TEST(DecisionTest, PolicyValidation) {
  Policy p;
  EXPECT_TRUE(Validate(p).ok());
  p.min_workers = 10;
  p.max_workers = 5;
  EXPECT_NE(Validate(p).message().find("above maxWorkers"), std::string::npos);
  p = Policy{};
  p.safety_factor = 0.5;
  EXPECT_FALSE(Validate(p).ok());
}

}  // namespace
}  // namespace graintune

namespace graintune {
namespace {

// Process figures come from a pod its owner controls: memory or cores no pod on the host can have
// shown are not measurements, and the budgets stay as the defaults set them.
TEST(DecisionTest, FiguresNoPodOnTheHostCouldShowAreNotMeasurements) {
  const TuningInputs in = SeedInputs();
  Trial t = MakeTrial(0, 8, 15000, true);
  const Decision plain = Decide(in, {t});
  t.worker_memory_bytes = 1e15;
  t.trainer_memory_bytes = 1e9;
  t.trainer_cpu_cores = 1e5;
  const Decision hostile = Decide(in, {t});
  EXPECT_EQ(hostile.workers, plain.workers);
  EXPECT_EQ(hostile.budgets.memory, plain.budgets.memory);
  EXPECT_EQ(hostile.budgets.cpu, plain.budgets.cpu);
  // A figure the host can hold is one.
  t.worker_memory_bytes = in.host.memory_bytes / 4;
  t.trainer_cpu_cores = -1;
  EXPECT_LT(Decide(in, {t}).budgets.memory, plain.budgets.memory);
}

// A trial whose busy share read low (so it looked fed) ran clearly below a later saturated
// one: no fed trial reached the best. The value is the fewest workers at the best, not a crash.
TEST(DecisionTest, AFedLookingTrialBelowASaturatedBestKeepsTheBestsWorkers) {
  TuningInputs in = SeedInputs();
  Trial looked_fed = MakeTrial(0, 10, 8000, false);
  looked_fed.worker_busy_fraction = 0.5;
  Trial saturated = MakeTrial(1, 20, 16000, true);
  saturated.worker_busy_fraction = 0.97;
  for (ValueLifetime lifetime : {ValueLifetime::kAttempt, ValueLifetime::kRun}) {
    in.lifetime = lifetime;
    const Decision d = Decide(in, {looked_fed, saturated});
    EXPECT_GE(d.workers, 20) << d.reason;
  }
}

// Nothing says how fast this raw-text dataset's workers are: a run that keeps its value is
// sized for the slow end of raw text (600 tok/s), one whose next attempt can correct it for
// the typical 2,000; both within the budgets.
TEST(DecisionTest, AWholeRunWithoutAKnownRateIsSizedForTheSlowEndOfItsKind) {
  TuningInputs in = SeedInputs();
  in.profile = DefaultProfile(DatasetKind::kRawText);
  in.demand.tokens_per_second_per_host = 6000;
  const Decision attempt = Decide(in, {});
  in.lifetime = ValueLifetime::kRun;
  const Decision run = Decide(in, {});
  EXPECT_EQ(attempt.workers, 4) << attempt.reason;  // 6000 / 2000 x1.25
  EXPECT_EQ(run.workers, 13) << run.reason;         // 6000 / 600 x1.25
  EXPECT_NE(run.reason.find("the low end of raw-text datasets, 600..7.2k"), std::string::npos) << run.reason;
  EXPECT_EQ(run.per_worker_tokens_per_second, PlausibleRates(DatasetKind::kRawText).low);
  // The budgets still bound it: a demand no host could feed gets the ceiling, never more.
  in.demand.tokens_per_second_per_host = 6e6;
  const Decision huge = Decide(in, {});
  EXPECT_EQ(huge.workers, huge.budgets.ceiling) << huge.reason;
  EXPECT_LE(huge.workers * huge.budgets.per_worker_memory_bytes,
            in.host.memory_bytes - DefaultReservedMemory(in.host.memory_bytes));
}

// A known rate (annotated or learned) keeps at least x1.4 for a whole run: an estimate 10% off
// and jittery batches must not starve a run that cannot change its value.
TEST(DecisionTest, AWholeRunWithAKnownRateKeepsRunHeadroom) {
  TuningInputs in = SeedInputs();
  in.demand.tokens_per_second_per_host = 21000;  // 10 workers' worth at 2,100 each
  const Decision attempt = Decide(in, {});
  in.lifetime = ValueLifetime::kRun;
  const Decision run = Decide(in, {});
  EXPECT_EQ(attempt.workers, 13) << attempt.reason;  // x1.25
  EXPECT_EQ(run.workers, 14) << run.reason;          // x1.4
  in.policy.objective = Objective::kFewestWorkers;   // the platform asked for thin margins
  EXPECT_EQ(Decide(in, {}).workers, 11);             // x1.05
}

// The next run's trim from a fed run whose workers mostly idled: the busy share is read a few
// points off, so a whole run counts it 4 points higher (one reading) and does not trim to a
// count that the share's error could starve.
TEST(DecisionTest, AWholeRunTrimsFromTheBusyShareWithItsMeasurementError) {
  TuningInputs in = SeedInputs();
  Trial fed = MakeTrial(0, 60, 21000, false);
  fed.worker_busy_fraction = 0.10;  // 6 busy workers' worth: 3,500 tok/s each
  const Decision attempt = Decide(in, {fed});
  in.lifetime = ValueLifetime::kRun;
  const Decision run = Decide(in, {fed});
  EXPECT_EQ(attempt.workers, 9) << attempt.reason;   // 6 busy x1.4
  EXPECT_EQ(run.workers, 12) << run.reason;          // 60 x 0.14 = 8.4 busy x1.4
  // A share under 5% (read as 0 by noise) still bounds the rate for a whole run.
  fed.worker_busy_fraction = 0.01;
  EXPECT_EQ(Decide(in, {fed}).workers, 8);  // 60 x 0.09 x1.4 = 7.56
  // Two readings halve the variance: the margin is 0.04 / sqrt(2).
  fed.worker_busy_fraction = 0.10;
  Trial again = fed;
  again.attempt = 1;
  EXPECT_EQ(Decide(in, {fed, again}).workers, 11);  // 60 x 0.128 = 7.7 busy x1.4 = 10.8

}

}  // namespace
}  // namespace graintune
