// Aggregates of the tuner benchmark: medians and minima of each method's throughput ratio,
// OOM counts, and the table and JSON line the benchmark prints.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/scenario_matrix.h"

namespace graintune::bench {

struct Summary {
  int scenarios = 0;
  double first_pick_median_ratio_annotated = 0;
  double first_pick_median_ratio_unannotated = 0;
  double first_pick_min_ratio = 0;
  double after_one_restart_median_ratio = 0;
  double after_two_restarts_median_ratio = 0;
  double after_two_restarts_min_ratio = 0;
  double after_two_restarts_share_at_0_99 = 0;  // share of scenarios at >= 0.99 of the oracle
  int graintune_oom_count = 0;
  std::map<std::string, double> baseline_median_ratio;
  std::map<std::string, int> baseline_oom_count;
  // Per memory margin: the minimum over scenarios of the best ratio reachable with exact
  // knowledge while keeping that share of host memory free, and how many scenarios fall
  // below 0.99 with it.
  std::map<double, double> exact_knowledge_min_ratio_with_memory_free;
  std::map<double, int> exact_knowledge_below_0_99_with_memory_free;
};

Summary Summarize(const std::vector<ScenarioResult>& results);
void PrintTable(const std::vector<ScenarioResult>& results, std::FILE* out);
void PrintSummary(const Summary& summary, std::FILE* out);
std::string SummaryJson(const Summary& summary);

}  // namespace graintune::bench
