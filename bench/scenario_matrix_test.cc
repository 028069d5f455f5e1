// The tuner benchmark's claims, held as tests: the full matrix runs in a few seconds and is
// deterministic, so the figures the README quotes cannot silently regress.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace graintune::bench
