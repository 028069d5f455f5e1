#include "bench/benchmark_summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tuner/practice_lap.h"

namespace graintune::bench {
namespace {

const char* kGraintune[] = {"first_pick", "after_one_restart", "after_two_restarts"};
const char* kBaselines[] = {"maxtext_default", "maxtext_auto", "all_cores"};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The value at or below which `share` of the values lie (nearest rank).
double Quantile(std::vector<double> v, double share) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(share * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double ShareAtLeast(const std::vector<double>& v, double floor) {
  return v.empty() ? 0
                   : static_cast<double>(std::count_if(v.begin(), v.end(),
                                                       [&](double r) { return r >= floor; })) /
                         static_cast<double>(v.size());
}

double Min(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

std::vector<double> Ratios(const std::vector<ScenarioResult>& results, const std::string& method,
                           int annotated /* -1 any, 0 no, 1 yes */) {
  std::vector<double> out;
  for (const ScenarioResult& r : results) {
    if (annotated >= 0 && r.scenario->annotated != (annotated == 1)) continue;
    out.push_back(r.methods.at(method).ratio);
  }
  return out;
}

WorkerRatios OverOracle(const std::vector<ScenarioResult>& results, const std::string& method) {
  std::vector<double> over;
  for (const ScenarioResult& r : results) over.push_back(r.methods.at(method).workers_over_oracle);
  if (over.empty()) return {};
  return {.median = Median(over), .p90 = Quantile(over, 0.9),
          .max = *std::max_element(over.begin(), over.end())};
}

PinnedSummary SummarizePinned(const std::vector<ScenarioResult>& results, bool process_figures) {
  PinnedSummary p;
  const std::string run1 = PinnedMethod(1, process_figures), run2 = PinnedMethod(2, process_figures),
                    run3 = PinnedMethod(3, process_figures);
  p.run1_share_at_0_97_annotated = ShareAtLeast(Ratios(results, run1, 1), 0.97);
  p.run1_share_at_0_97_unannotated = ShareAtLeast(Ratios(results, run1, 0), 0.97);
  p.run1_min_ratio = Min(Ratios(results, run1, -1));
  for (const ScenarioResult& r : results) {
    const MethodResult& m = r.methods.at(run1);
    if (m.ratio >= 0.97) continue;
    if (r.fewest_workers_at_0_97 > m.ceiling) ++p.run1_misses_beyond_budget;
    else ++p.run1_misses_within_budget;
  }
  for (const ScenarioResult& r : results) {
    const MethodResult& m = r.methods.at(run2);
    if (m.ratio >= 0.99) continue;
    if (r.fewest_workers_at_0_99 > m.ceiling) ++p.run2_misses_beyond_budget;
    else ++p.run2_misses_within_budget;
  }
  p.run2_share_at_0_99 = ShareAtLeast(Ratios(results, run2, -1), 0.99);
  p.run2_min_ratio = Min(Ratios(results, run2, -1));
  p.run3_share_at_0_99 = ShareAtLeast(Ratios(results, run3, -1), 0.99);
  p.run1_workers_over_oracle = OverOracle(results, run1);
  p.run2_workers_over_oracle = OverOracle(results, run2);
  p.run3_workers_over_oracle = OverOracle(results, run3);
  for (const ScenarioResult& r : results)
    for (int run = 1; run <= kPinnedRuns; ++run) p.oom_count += r.methods.at(PinnedMethod(run, process_figures)).oom;
  return p;
}

LapSummary SummarizeLap(const std::vector<ScenarioResult>& results) {
  LapSummary l;
  l.run1_share_at_0_97 = ShareAtLeast(Ratios(results, kLapRun1, -1), 0.97);
  l.run1_share_at_0_97_annotated = ShareAtLeast(Ratios(results, kLapRun1, 1), 0.97);
  l.run1_share_at_0_97_unannotated = ShareAtLeast(Ratios(results, kLapRun1, 0), 0.97);
  l.run1_min_ratio = Min(Ratios(results, kLapRun1, -1));
  l.run1_workers_over_oracle = OverOracle(results, kLapRun1);
  std::vector<double> cost;
  for (const ScenarioResult& r : results) {
    const MethodResult& m = r.methods.at(kLapRun1);
    l.oom_count += m.oom;
    l.no_value_count += !r.lap_gave_value;
    l.run1_misses_beyond_budget += m.ratio < 0.97 && r.fewest_workers_at_0_97 > m.ceiling;
    cost.push_back(r.lap_cost_seconds);
  }
  l.cost_seconds_median = Median(cost);
  l.cost_seconds_p90 = Quantile(cost, 0.9);
  return l;
}

void PrintLap(const LapSummary& l, std::FILE* out) {
  std::fprintf(out, "run 1 from a practice lap (admission's value for a run, LapSteps steps):\n");
  std::fprintf(out, "  run 1, share >= 0.97               %.3f   (target >= 0.98)\n", l.run1_share_at_0_97);
  std::fprintf(out, "  run 1, share >= 0.97, annotated    %.3f\n", l.run1_share_at_0_97_annotated);
  std::fprintf(out, "  run 1, share >= 0.97, unannotated  %.3f\n", l.run1_share_at_0_97_unannotated);
  std::fprintf(out, "  run 1, minimum                     %.3f\n", l.run1_min_ratio);
  std::fprintf(out, "  run 1 below 0.97 beyond the budgets %d\n", l.run1_misses_beyond_budget);
  std::fprintf(out, "  workers / oracle's: median %.2f (target <= 1.3), p90 %.2f (target <= 1.6), max %.2f\n",
               l.run1_workers_over_oracle.median, l.run1_workers_over_oracle.p90,
               l.run1_workers_over_oracle.max);
  std::fprintf(out, "  OOM kills                          %d       (target 0)\n", l.oom_count);
  std::fprintf(out, "  laps that gave no value            %d\n", l.no_value_count);
  std::fprintf(out, "  lap wall time, median / p90        %.0f s / %.0f s\n", l.cost_seconds_median,
               l.cost_seconds_p90);
}

void AddLapJson(nlohmann::json& j, const LapSummary& l) {
  j["lap_run1_share_at_0_97"] = l.run1_share_at_0_97;
  j["lap_run1_share_at_0_97_annotated"] = l.run1_share_at_0_97_annotated;
  j["lap_run1_share_at_0_97_unannotated"] = l.run1_share_at_0_97_unannotated;
  j["lap_run1_min_ratio"] = l.run1_min_ratio;
  j["lap_run1_misses_beyond_budget"] = l.run1_misses_beyond_budget;
  j["lap_run1_workers_over_oracle_median"] = l.run1_workers_over_oracle.median;
  j["lap_run1_workers_over_oracle_p90"] = l.run1_workers_over_oracle.p90;
  j["lap_run1_workers_over_oracle_max"] = l.run1_workers_over_oracle.max;
  j["lap_oom_count"] = l.oom_count;
  j["lap_no_value_count"] = l.no_value_count;
  j["lap_cost_seconds_median"] = l.cost_seconds_median;
  j["lap_cost_seconds_p90"] = l.cost_seconds_p90;
}

void PrintPinned(const char* title, const PinnedSummary& p, std::FILE* out) {
  std::fprintf(out, "%s\n", title);
  std::fprintf(out, "  run 1, share >= 0.97, annotated    %.3f   (target >= 0.95)\n", p.run1_share_at_0_97_annotated);
  std::fprintf(out, "  run 1, share >= 0.97, unannotated  %.3f   (target >= 0.95)\n", p.run1_share_at_0_97_unannotated);
  std::fprintf(out, "  run 1, minimum                     %.3f\n", p.run1_min_ratio);
  std::fprintf(out, "  run 1 below 0.97: beyond the budgets %d, within them %d\n",
               p.run1_misses_beyond_budget, p.run1_misses_within_budget);
  std::fprintf(out, "  run 2, share >= 0.99               %.3f   (target >= 0.98)\n", p.run2_share_at_0_99);
  std::fprintf(out, "  run 2, minimum                     %.3f\n", p.run2_min_ratio);
  std::fprintf(out, "  run 2 below 0.99: beyond the budgets %d, within them %d\n",
               p.run2_misses_beyond_budget, p.run2_misses_within_budget);
  std::fprintf(out, "  run 3, share >= 0.99               %.3f\n", p.run3_share_at_0_99);
  std::fprintf(out, "  workers / oracle's: median, p90, max\n");
  const std::pair<const char*, const WorkerRatios*> rows[] = {{"run 1", &p.run1_workers_over_oracle},
                                                              {"run 2", &p.run2_workers_over_oracle},
                                                              {"run 3", &p.run3_workers_over_oracle}};
  for (const auto& [name, w] : rows)
    std::fprintf(out, "    %-8s %5.2f %5.2f %6.2f%s\n", name, w->median, w->p90, w->max,
                 w == &p.run3_workers_over_oracle ? "   (target median <= 1.25, p90 <= 1.6)" : "");
  std::fprintf(out, "  OOM kills                          %d       (target 0)\n", p.oom_count);
}

void AddPinnedJson(nlohmann::json& j, const std::string& prefix, const PinnedSummary& p) {
  j[prefix + "run1_share_at_0_97_annotated"] = p.run1_share_at_0_97_annotated;
  j[prefix + "run1_share_at_0_97_unannotated"] = p.run1_share_at_0_97_unannotated;
  j[prefix + "run1_min_ratio"] = p.run1_min_ratio;
  j[prefix + "run1_misses_beyond_budget"] = p.run1_misses_beyond_budget;
  j[prefix + "run1_misses_within_budget"] = p.run1_misses_within_budget;
  j[prefix + "run2_share_at_0_99"] = p.run2_share_at_0_99;
  j[prefix + "run2_min_ratio"] = p.run2_min_ratio;
  j[prefix + "run2_misses_beyond_budget"] = p.run2_misses_beyond_budget;
  j[prefix + "run2_misses_within_budget"] = p.run2_misses_within_budget;
  j[prefix + "run3_share_at_0_99"] = p.run3_share_at_0_99;
  j[prefix + "run1_workers_over_oracle_median"] = p.run1_workers_over_oracle.median;
  j[prefix + "run2_workers_over_oracle_median"] = p.run2_workers_over_oracle.median;
  j[prefix + "run3_workers_over_oracle_median"] = p.run3_workers_over_oracle.median;
  j[prefix + "run3_workers_over_oracle_p90"] = p.run3_workers_over_oracle.p90;
  j[prefix + "oom_count"] = p.oom_count;
}

}  // namespace

Summary Summarize(const std::vector<ScenarioResult>& results) {
  Summary s;
  s.scenarios = static_cast<int>(results.size());
  s.first_pick_median_ratio_annotated = Median(Ratios(results, "first_pick", 1));
  s.first_pick_median_ratio_unannotated = Median(Ratios(results, "first_pick", 0));
  s.first_pick_min_ratio = Min(Ratios(results, "first_pick", -1));
  s.after_one_restart_median_ratio = Median(Ratios(results, "after_one_restart", -1));
  s.after_two_restarts_median_ratio = Median(Ratios(results, "after_two_restarts", -1));
  s.after_two_restarts_min_ratio = Min(Ratios(results, "after_two_restarts", -1));
  const std::vector<double> after_two = Ratios(results, "after_two_restarts", -1);
  s.after_two_restarts_share_at_0_99 = ShareAtLeast(after_two, 0.99);
  s.after_two_restarts_share_at_0_97 = ShareAtLeast(after_two, 0.97);
  for (const auto& methods : {std::vector<const char*>(std::begin(kGraintune), std::end(kGraintune)),
                              std::vector<const char*>(std::begin(kBaselines), std::end(kBaselines))})
    for (const char* m : methods) s.workers_over_oracle[m] = OverOracle(results, m);
  s.pinned = SummarizePinned(results, true);
  s.pinned_step_times_only = SummarizePinned(results, false);
  s.lap = SummarizeLap(results);
  for (const ScenarioResult& r : results) {
    s.trims += r.trims;
    s.starved_trims += r.starved_trims;
    for (const char* m : kGraintune) s.graintune_oom_count += r.methods.at(m).oom;
    for (const char* b : kBaselines) s.baseline_oom_count[b] += r.methods.at(b).oom;
  }
  for (const char* b : kBaselines) s.baseline_median_ratio[b] = Median(Ratios(results, b, -1));
  for (double margin : kMemoryMargins) {
    std::vector<double> best;
    for (const ScenarioResult& r : results) best.push_back(r.best_ratio_with_memory_free.at(margin));
    s.exact_knowledge_by_memory_free[margin] = {
        .min_ratio = Min(best),
        .scenarios_below_0_99 = static_cast<int>(
            std::count_if(best.begin(), best.end(), [](double r) { return r < 0.99; }))};
  }
  return s;
}

void PrintTable(const std::vector<ScenarioResult>& results, std::FILE* out) {
  std::fprintf(out, "%-17s %-12s %-12s %-4s %6s | %-10s %-10s %-10s | %-10s %-10s %-10s | %-10s %-10s %-10s\n",
               "host", "model", "dataset", "ann", "oracle", "first", "restart1", "restart2",
               "run1", "run2", "run3", "default", "maxtext-1", "all-cores");
  for (const ScenarioResult& r : results) {
    const Scenario& s = *r.scenario;
    std::fprintf(out, "%-17s %-12s %-12s %-4s %6d |", s.host_type.c_str(), s.model.c_str(),
                 s.kind.c_str(), s.annotated ? "yes" : "no", r.oracle_workers);
    auto cell = [&](const char* m) {
      const MethodResult& x = r.methods.at(m);
      if (x.oom) {
        std::fprintf(out, " %4d  OOM ", x.workers);
      } else {
        std::fprintf(out, " %4d %5.3f", x.workers, x.ratio);
      }
    };
    for (const char* m : kGraintune) cell(m);
    std::fprintf(out, " |");
    for (int run = 1; run <= kPinnedRuns; ++run) cell(PinnedMethod(run, true).c_str());
    std::fprintf(out, " |");
    for (const char* b : kBaselines) cell(b);
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "(each cell: workers and steady throughput / oracle's, capped at 1; first and\n"
                   " restarts: one run's attempts; run1..3: runs that keep one value each)\n\n");
}

void PrintSummary(const Summary& s, std::FILE* out) {
  std::fprintf(out, "scenarios                          %d\n", s.scenarios);
  std::fprintf(out, "first pick, median, annotated      %.3f   (target >= 0.97)\n",
               s.first_pick_median_ratio_annotated);
  std::fprintf(out, "first pick, median, unannotated    %.3f   (target >= 0.90)\n",
               s.first_pick_median_ratio_unannotated);
  std::fprintf(out, "after one restart, median          %.3f\n", s.after_one_restart_median_ratio);
  std::fprintf(out, "after two restarts, minimum        %.3f   (target >= 0.99)\n",
               s.after_two_restarts_min_ratio);
  std::fprintf(out, "after two restarts, share >= 0.99  %.3f\n", s.after_two_restarts_share_at_0_99);
  std::fprintf(out, "after two restarts, share >= 0.97  %.3f   (target >= 0.98)\n",
               s.after_two_restarts_share_at_0_97);
  std::fprintf(out, "workers / oracle's (= worker memory / oracle's): median, p90, max\n");
  for (const auto& [method, w] : s.workers_over_oracle)
    std::fprintf(out, "  %-20s %5.2f %5.2f %6.2f%s\n", method.c_str(), w.median, w.p90, w.max,
                 method == "after_two_restarts" ? "   (target median <= 1.25, p90 <= 1.6)" : "");
  std::fprintf(out, "trims (fewer workers than a fed attempt before) %d, of which starved (< 0.97) %d\n",
               s.trims, s.starved_trims);
  std::fprintf(out, "graintune OOM kills                %d       (target 0)\n",
               s.graintune_oom_count);
  for (const auto& [name, ratio] : s.baseline_median_ratio) {
    std::fprintf(out, "baseline %-16s median %.3f, OOM kills %d\n", name.c_str(), ratio,
                 s.baseline_oom_count.at(name));
  }
  // What the >= 0.99 target asks of memory: exact knowledge of the truth, a margin kept free.
  for (const auto& [margin, bound] : s.exact_knowledge_by_memory_free) {
    std::fprintf(out, "exact knowledge, %2.0f%% memory free   minimum %.3f, scenarios below 0.99: %d\n",
                 100 * margin, bound.min_ratio, bound.scenarios_below_0_99);
  }
  PrintPinned("runs that keep one value (pinned track), with the process figures:", s.pinned, out);
  PrintPinned("pinned track, step times only (no shared process namespace):", s.pinned_step_times_only, out);
  PrintLap(s.lap, out);
}

std::string SummaryJson(const Summary& s) {
  nlohmann::json j = {
      {"scenarios", s.scenarios},
      {"first_pick_median_ratio_annotated", s.first_pick_median_ratio_annotated},
      {"first_pick_median_ratio_unannotated", s.first_pick_median_ratio_unannotated},
      {"first_pick_min_ratio", s.first_pick_min_ratio},
      {"after_one_restart_median_ratio", s.after_one_restart_median_ratio},
      {"after_two_restarts_median_ratio", s.after_two_restarts_median_ratio},
      {"after_two_restarts_min_ratio", s.after_two_restarts_min_ratio},
      {"after_two_restarts_share_at_0_99", s.after_two_restarts_share_at_0_99},
      {"graintune_oom_count", s.graintune_oom_count},
      {"baseline_median_ratio", s.baseline_median_ratio},
      {"baseline_oom_count", s.baseline_oom_count},
      {"after_two_restarts_share_at_0_97", s.after_two_restarts_share_at_0_97},
      {"trims", s.trims},
      {"starved_trims", s.starved_trims},
  };
  for (const auto& [method, w] : s.workers_over_oracle) {
    j[method + "_workers_over_oracle_median"] = w.median;
    j[method + "_workers_over_oracle_p90"] = w.p90;
    j[method + "_workers_over_oracle_max"] = w.max;
  }
  for (const auto& [margin, bound] : s.exact_knowledge_by_memory_free) {
    const std::string key = "memory_free_" + std::to_string(static_cast<int>(100 * margin + 0.5)) + "pct";
    j["exact_knowledge_min_ratio"][key] = bound.min_ratio;
    j["exact_knowledge_scenarios_below_0_99"][key] = bound.scenarios_below_0_99;
  }
  AddPinnedJson(j, "pinned_", s.pinned);
  AddPinnedJson(j, "pinned_step_times_only_", s.pinned_step_times_only);
  AddLapJson(j, s.lap);
  return j.dump();
}

}  // namespace graintune::bench
