// Aggregates of the tuner benchmark: medians and minima of each method's throughput ratio,
// its workers over the oracle's, OOM counts, trims, and the table and JSON line the benchmark
// prints.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/scenario_matrix.h"

namespace graintune::bench {

// With exact knowledge of a scenario's truth and a share of host memory kept free: the
// minimum over scenarios of the best reachable ratio, and how many scenarios fall below 0.99.
struct ExactKnowledgeBound {
  double min_ratio = 0;
  int scenarios_below_0_99 = 0;
};

// A method's workers over the oracle's, across scenarios.
struct WorkerRatios {
  double median = 0, p90 = 0, max = 0;
};

// The pinned-runs track (runs that keep one value each), with or without process figures.
struct PinnedSummary {
  double run1_share_at_0_97_annotated = 0;
  double run1_share_at_0_97_unannotated = 0;
  double run1_min_ratio = 0;
  // Run-1 scenarios below 0.97 where 0.97 needed more workers than the budgets allowed at the
  // per-worker memory graintune could assume (the kind's high end): misses no OOM-safe pick
  // avoids without knowing the dataset. And the run-1 misses that are not of that kind.
  int run1_misses_beyond_budget = 0;
  int run1_misses_within_budget = 0;
  double run2_share_at_0_99 = 0;
  double run2_min_ratio = 0;
  int run2_misses_beyond_budget = 0;  // below 0.99 where 0.99 needed more than the budgets
  int run2_misses_within_budget = 0;
  double run3_share_at_0_99 = 0;
  WorkerRatios run1_workers_over_oracle, run2_workers_over_oracle, run3_workers_over_oracle;
  int oom_count = 0;
};

// The practice-lap track: run 1 decided from a lap of the job's own command.
struct LapSummary {
  double run1_share_at_0_97 = 0;  // all scenarios
  double run1_share_at_0_97_annotated = 0;
  double run1_share_at_0_97_unannotated = 0;
  double run1_min_ratio = 0;
  int run1_misses_beyond_budget = 0;  // below 0.97 where 0.97 needed more than the ceiling
  WorkerRatios run1_workers_over_oracle;
  int oom_count = 0;
  int no_value_count = 0;  // laps that gave no value (run 1 kept admission's)
  double cost_seconds_median = 0, cost_seconds_p90 = 0;
};

struct Summary {
  int scenarios = 0;
  double first_pick_median_ratio_annotated = 0;
  double first_pick_median_ratio_unannotated = 0;
  double first_pick_min_ratio = 0;
  double after_one_restart_median_ratio = 0;
  double after_two_restarts_median_ratio = 0;
  double after_two_restarts_min_ratio = 0;
  double after_two_restarts_share_at_0_99 = 0;  // share of scenarios at >= 0.99 of the oracle
  double after_two_restarts_share_at_0_97 = 0;
  std::map<std::string, WorkerRatios> workers_over_oracle;  // by method, baselines included
  int trims = 0;          // restarts after which graintune picked fewer workers than fed ones
  int starved_trims = 0;  // of those, the ones below 0.97 of the oracle
  int graintune_oom_count = 0;
  std::map<std::string, double> baseline_median_ratio;
  std::map<std::string, int> baseline_oom_count;
  std::map<double, ExactKnowledgeBound> exact_knowledge_by_memory_free;  // key: share kept free
  PinnedSummary pinned;                   // with the exporter's process figures
  PinnedSummary pinned_step_times_only;   // without them
  LapSummary lap;
};

Summary Summarize(const std::vector<ScenarioResult>& results);
void PrintTable(const std::vector<ScenarioResult>& results, std::FILE* out);
void PrintSummary(const Summary& summary, std::FILE* out);
std::string SummaryJson(const Summary& summary);

}  // namespace graintune::bench
