// The tuner benchmark: every method's worker count on every scenario of the matrix, scored
// against the oracle in one run, ending with one JSON summary line. See scenario_matrix.h.
//
//   build/bench/tuner_benchmark [--seed N] [--quiet]
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/benchmark_summary.h"
#include "bench/scenario_matrix.h"

int main(int argc, char** argv) {
  using namespace graintune::bench;
  uint64_t seed = 20261130;
  bool quiet = false;
  std::string trace;  // print the decisions of scenarios whose row contains this
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::stoull(argv[++i]);
    } else if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace = argv[++i];
    } else if (std::strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else {
      std::fprintf(stderr, "usage: tuner_benchmark [--seed N] [--quiet] [--trace TEXT]\n");
      return 2;
    }
  }
  const std::vector<Scenario> scenarios = BuildScenarios(seed);
  std::vector<ScenarioResult> results;
  for (const Scenario& s : scenarios) results.push_back(Evaluate(s, seed));
  if (!quiet) PrintTable(results, stdout);
  for (const ScenarioResult& r : results) {
    const Scenario& s = *r.scenario;
    const std::string row = s.host_type + " " + s.model + " " + s.kind + (s.annotated ? " yes" : " no");
    if (trace.empty() || row.find(trace) == std::string::npos) continue;
    std::printf("trace %s (oracle %d workers)\n", row.c_str(), r.oracle_workers);
    for (const std::string& line : r.trace) std::printf("  %s\n", line.c_str());
  }
  const Summary summary = Summarize(results);
  PrintSummary(summary, stdout);
  std::printf("%s\n", SummaryJson(summary).c_str());
  return 0;
}
