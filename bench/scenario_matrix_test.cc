// The tuner benchmark's claims, held as tests: the full matrix runs in a few seconds and is
// deterministic, so the figures the README quotes cannot silently regress.
#include <gtest/gtest.h>

#include <cstdio>

#include "bench/benchmark_summary.h"
#include "bench/scenario_matrix.h"

namespace graintune::bench {
namespace {

constexpr uint64_t kSeed = 20261130;

TEST(ScenarioMatrixTest, HiddenTruthSpreadsOverTenfold) {
  const std::vector<Scenario> scenarios = BuildScenarios(kSeed);
  double lo = 1e300, hi = 0, mem_lo = 1e300, mem_hi = 0;
  for (const Scenario& s : scenarios) {
    if (s.kind != "raw-text") continue;
    lo = std::min(lo, s.truth.tokens_per_second_per_worker);
    hi = std::max(hi, s.truth.tokens_per_second_per_worker);
    mem_lo = std::min(mem_lo, s.truth.worker_memory_bytes);
    mem_hi = std::max(mem_hi, s.truth.worker_memory_bytes);
  }
  EXPECT_GT(hi / lo, 8.0);
  EXPECT_GT(mem_hi / mem_lo, 6.0);
  EXPECT_EQ(scenarios.size(), 144u);
}

TEST(ScenarioMatrixTest, UnannotatedTunerSeesOnlyDefaults) {
  for (const Scenario& s : BuildScenarios(kSeed)) {
    if (s.annotated) continue;
    EXPECT_NE(s.seen.profile.tokens_per_second_per_worker, s.truth.tokens_per_second_per_worker);
    EXPECT_NE(s.seen.profile.source.find("default"), std::string::npos);
  }
}

// One test for every figure of the full run (each test is its own process under ctest).
TEST(ScenarioMatrixTest, MeetsTheBenchmarkTargets) {
  const std::vector<Scenario> scenarios = BuildScenarios(kSeed);
  std::vector<ScenarioResult> results;
  for (const Scenario& scenario : scenarios) results.push_back(Evaluate(scenario, kSeed));
  const Summary s = Summarize(results);
  EXPECT_GE(s.first_pick_median_ratio_annotated, 0.97);
  EXPECT_GE(s.first_pick_median_ratio_unannotated, 0.90);
  EXPECT_EQ(s.graintune_oom_count, 0);
  EXPECT_GE(s.after_two_restarts_median_ratio, 0.99);
  EXPECT_GE(s.after_two_restarts_share_at_0_99, 0.98);
  EXPECT_GE(s.after_two_restarts_share_at_0_97, 0.98);
  // Converged on the fewest workers that keep the chips fed, not on whatever reached the best.
  EXPECT_LE(s.workers_over_oracle.at("after_two_restarts").median, 1.25);
  EXPECT_LE(s.workers_over_oracle.at("after_two_restarts").p90, 1.6);
  EXPECT_LT(s.workers_over_oracle.at("after_two_restarts").p90,
            s.workers_over_oracle.at("first_pick").p90);
  // Throughput ratios are capped at the oracle's: more workers cannot score above it.
  for (const ScenarioResult& r : results)
    for (const auto& [method, m] : r.methods) EXPECT_LE(m.ratio, 1.0) << method;
  // Every miss is one graintune declines on purpose: the oracle's workers plus the trainer need
  // more than 90% of the host's allocatable memory, inside the headroom graintune keeps (the
  // simulator's memory is exact; a real run's peaks are not).
  for (const ScenarioResult& r : results) {
    if (r.methods.at("after_two_restarts").ratio >= 0.99) continue;
    PipelineParams t = r.scenario->truth;
    t.workers = r.oracle_workers;
    // Not even exact knowledge of the truth reaches 0.99 there while keeping 5% of memory free.
    EXPECT_LT(r.best_ratio_with_memory_free.at(0.05), 0.99);
    EXPECT_GT(HostMemoryInUse(t), 0.9 * t.host_memory_bytes)
        << r.scenario->host_type << " " << r.scenario->model << " " << r.scenario->kind;
  }
  EXPECT_GT(s.first_pick_median_ratio_unannotated, s.baseline_median_ratio.at("maxtext_default"));
  EXPECT_GT(s.baseline_oom_count.at("all_cores"), 0);  // what "all cores" costs
}

// Runs that keep one value each (checkpointed runs): the targets, on the default seed
// and the next two, with the process figures (the chart's default; see the README). Where
// a target asks for more workers than the budgets allow, no pick that is safe from OOM for
// every dataset of the kind reaches it without knowing the dataset; those scenarios are counted
// apart (fewest workers at the threshold above the decision's ceiling), shown here to be just
// that, and the share is asserted over the rest. The raw shares are printed beside them.
class PinnedRunsTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(PinnedRunsTest, MeetTheTargetsWithinTheBudgets) {
  const std::vector<Scenario> scenarios = BuildScenarios(GetParam());
  std::vector<ScenarioResult> results;
  for (const Scenario& scenario : scenarios) results.push_back(Evaluate(scenario, GetParam()));
  const Summary s = Summarize(results);
  const std::string run1 = PinnedMethod(1, true), run2 = PinnedMethod(2, true);

  // Run 1, no knowledge: >= 0.97 in 95% of the scenarios the budgets allow it, annotated and
  // unannotated apart.
  for (bool annotated : {true, false}) {
    int allowed = 0, met = 0;
    for (const ScenarioResult& r : results) {
      if (r.scenario->annotated != annotated) continue;
      const MethodResult& m = r.methods.at(run1);
      if (m.ratio < 0.97 && r.fewest_workers_at_0_97 > m.ceiling) continue;  // beyond budget
      ++allowed;
      met += m.ratio >= 0.97;
    }
    EXPECT_GE(static_cast<double>(met) / allowed, 0.95) << (annotated ? "annotated" : "unannotated");
  }
  // Run 2, from run 1's trial: >= 0.99 in 98% of the scenarios the budgets allow it.
  int allowed = 0, met = 0;
  for (const ScenarioResult& r : results) {
    const MethodResult& m = r.methods.at(run2);
    if (m.ratio < 0.99 && r.fewest_workers_at_0_99 > m.ceiling) continue;
    ++allowed;
    met += m.ratio >= 0.99;
  }
  EXPECT_GE(static_cast<double>(met) / allowed, 0.98);
  // Run 3, from both: the fewest workers that keep the chips fed.
  EXPECT_LE(s.pinned.run3_workers_over_oracle.median, 1.25);
  EXPECT_LE(s.pinned.run3_workers_over_oracle.p90, 1.6);
  // Never an OOM kill, with or without the process figures.
  EXPECT_EQ(s.pinned.oom_count, 0);
  EXPECT_EQ(s.pinned_step_times_only.oom_count, 0);
  // Run 1 is the same either way: nothing was measured yet.
  EXPECT_EQ(s.pinned.run1_min_ratio, s.pinned_step_times_only.run1_min_ratio);
  std::printf("seed %llu: run 1 >= 0.97 annotated %.3f, unannotated %.3f (beyond the budgets: %d); "
              "run 2 >= 0.99 %.3f (beyond: %d); run 3 workers/oracle median %.2f, p90 %.2f\n",
              static_cast<unsigned long long>(GetParam()), s.pinned.run1_share_at_0_97_annotated,
              s.pinned.run1_share_at_0_97_unannotated, s.pinned.run1_misses_beyond_budget,
              s.pinned.run2_share_at_0_99, s.pinned.run2_misses_beyond_budget,
              s.pinned.run3_workers_over_oracle.median, s.pinned.run3_workers_over_oracle.p90);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PinnedRunsTest, ::testing::Values(kSeed, 1, 2));

// On the default seed the raw shares meet the targets except run 1 unannotated, whose
// misses are all beyond the budgets (the per-worker memory graintune must assume, the high end
// of the kind, leaves too few workers for the hungriest scenarios).
TEST(ScenarioMatrixTest, PinnedRunsOnTheDefaultSeed) {
  const std::vector<Scenario> scenarios = BuildScenarios(kSeed);
  std::vector<ScenarioResult> results;
  for (const Scenario& scenario : scenarios) results.push_back(Evaluate(scenario, kSeed));
  const Summary s = Summarize(results);
  EXPECT_GE(s.pinned.run1_share_at_0_97_annotated, 0.95);
  EXPECT_EQ(s.pinned.run1_misses_within_budget, 0);
  EXPECT_GE(s.pinned.run2_share_at_0_99, 0.98);
  EXPECT_EQ(s.pinned.run2_misses_within_budget, 0);
  // The unannotated first pick of a run that keeps its value no longer starts starved: from
  // 73.6% of scenarios at >= 0.97 with the rule for attempts to the figure below.
  EXPECT_GT(s.pinned.run1_share_at_0_97_unannotated, 0.93);
  // Without the process figures a fed run cannot show how much its workers idle: nothing is
  // trimmed, so run 3 keeps run 1's generous count (what the shared process namespace buys).
  EXPECT_GT(s.pinned_step_times_only.run3_workers_over_oracle.median,
            s.pinned.run3_workers_over_oracle.median);
}

// Run 1 decided from a practice lap (the lap-track keys), on the default seed and seeds the
// lap was never tuned on. Its targets: >= 0.97 of the oracle in >= 98% of the scenarios,
// annotated or not (asserted over the scenarios whose budgets allow it, as for the pinned track;
// the raw shares are printed), no OOM kill, a value from every lap.
class LapRunsTest : public ::testing::TestWithParam<uint64_t> {};

// `scenarios` outlives `results`, which point into it.
Summary Evaluated(uint64_t seed, std::vector<Scenario>& scenarios,
                  std::vector<ScenarioResult>& results) {
  scenarios = BuildScenarios(seed);
  for (const Scenario& scenario : scenarios) results.push_back(Evaluate(scenario, seed));
  return Summarize(results);
}

TEST_P(LapRunsTest, Run1FromALapFeedsTheChipsWithinTheBudgets) {
  std::vector<Scenario> scenarios;
  std::vector<ScenarioResult> results;
  const Summary s = Evaluated(GetParam(), scenarios, results);
  for (bool annotated : {true, false}) {
    int allowed = 0, met = 0;
    for (const ScenarioResult& r : results) {
      if (r.scenario->annotated != annotated) continue;
      const MethodResult& m = r.methods.at(kLapRun1);
      if (m.ratio < 0.97 && r.fewest_workers_at_0_97 > m.ceiling) continue;  // beyond budget
      ++allowed;
      met += m.ratio >= 0.97;
    }
    EXPECT_GE(static_cast<double>(met) / allowed, 0.98) << (annotated ? "annotated" : "unannotated");
  }
  EXPECT_EQ(s.lap.oom_count, 0);
  EXPECT_EQ(s.lap.no_value_count, 0);
  // The lap measured what admission had to guess: fewer workers than admission's run 1.
  EXPECT_LT(s.lap.run1_workers_over_oracle.median, s.pinned.run1_workers_over_oracle.median);
  EXPECT_LT(s.lap.run1_workers_over_oracle.p90, s.pinned.run1_workers_over_oracle.p90);
  EXPECT_GT(s.lap.cost_seconds_median, 0);
  // On the default seed the raw shares meet the target, annotated and not.
  if (GetParam() == kSeed) {
    EXPECT_GE(s.lap.run1_share_at_0_97_annotated, 0.98);
    EXPECT_GE(s.lap.run1_share_at_0_97_unannotated, 0.98);
  }
  std::printf("seed %llu: lap run 1 >= 0.97 %.3f (annotated %.3f, unannotated %.3f; beyond the "
              "budgets: %d); workers/oracle median %.2f, p90 %.2f; lap %.0f s median\n",
              static_cast<unsigned long long>(GetParam()), s.lap.run1_share_at_0_97,
              s.lap.run1_share_at_0_97_annotated, s.lap.run1_share_at_0_97_unannotated,
              s.lap.run1_misses_beyond_budget, s.lap.run1_workers_over_oracle.median,
              s.lap.run1_workers_over_oracle.p90, s.lap.cost_seconds_median);
}

// A run's value from its lap uses few workers: median <= 1.3 and p90 <= 1.6 of the oracle's
// (kLapTrimHeadroom, kLapBusyShareMargin).
TEST_P(LapRunsTest, Run1FromALapUsesFewWorkers) {
  std::vector<Scenario> scenarios;
  std::vector<ScenarioResult> results;
  const Summary s = Evaluated(GetParam(), scenarios, results);
  EXPECT_LE(s.lap.run1_workers_over_oracle.median, 1.3);
  EXPECT_LE(s.lap.run1_workers_over_oracle.p90, 1.6);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LapRunsTest, ::testing::Values(kSeed, 1, 2, 3));

}  // namespace
}  // namespace graintune::bench
