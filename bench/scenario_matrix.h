// The tuner benchmark's scenarios and how each method is scored on them.
//
// A scenario is a TPU host type, a MaxText model and batch, a dataset kind, and a hidden
// truth the tuner never reads directly: the real per-worker throughput and memory (spread
// over more than 10x around the tuner's defaults, as real datasets are), the real compute step
// (a utilisation unknown to the tuner), the trainer's real cpu and memory, and the jitter.
// The tuner sees that truth only through annotations (annotated scenarios, with a user's
// +-10% estimation error) or through trials simulated from it.
//
// Every method's worker count is scored by the simulated steady-state throughput at that count
// over the oracle's (the fewest workers reaching 99% of the best throughput without OOM), capped
// at 1 so that more workers than needed never score above the oracle, and by its workers (so also
// their memory) over the oracle's. The trials graintune is fed carry measurement noise like the
// exporter's: sampled memory peaks and trainer cpu a few percent off, the workers' busy share as
// cpu time with jitter. Deterministic given the matrix seed.
//
// Three tracks: attempts of one run whose value may change at every restart (first pick, after
// one and two restarts), runs that keep one value each (kPinnedRuns), and run 1 decided from a
// practice lap (kLapRun1).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tuner/decision.h"
#include "tuner/pipeline_simulator.h"

namespace graintune::bench {

struct Scenario {
  std::string host_type, model, kind;
  bool annotated = false;
  TuningInputs seen;       // what the tuner is given (defaults or annotations)
  PipelineParams truth;    // what the simulator runs (workers set per evaluation)
};

struct MethodResult {
  int workers = 0;
  double ratio = 0;  // steady throughput / oracle's, capped at 1; 0 when OOM-killed
  bool oom = false;
  // Workers / the oracle's workers; also their memory over the oracle's workers' memory, as
  // every worker of a scenario holds the same memory.
  double workers_over_oracle = 0;
  // graintune's methods: the most workers its budgets allowed (cpu, memory at the per-worker
  // figure it had: the kind's high-end default until a trial measured it, and the policy).
  int ceiling = 0;
};

struct ScenarioResult {
  const Scenario* scenario = nullptr;
  int oracle_workers = 0;
  double oracle_tokens_per_second = 0;
  // The fewest workers at 0.97 of the oracle's throughput: a method below 0.97 whose ceiling is
  // under this could not reach 0.97 without more workers than its budgets allowed.
  int fewest_workers_at_0_97 = 0;
  int fewest_workers_at_0_99 = 0;
  // "first_pick", "after_one_restart", "after_two_restarts", "maxtext_default",
  // "maxtext_auto", "all_cores", and the pinned runs (PinnedMethod).
  std::map<std::string, MethodResult> methods;
  // The most any method could reach, as a share of the oracle's throughput, when it knows the
  // hidden truth exactly but keeps this share of host memory free (kMemoryMargins): what the
  // oracle's last workers cost in memory safety.
  std::map<double, double> best_ratio_with_memory_free;
  std::vector<std::string> trace;  // each graintune decision's reason and the trial behind it
  // Restarts after which graintune picked fewer workers than a fed attempt before ran with (a
  // trim), and those of them that left the chips below 0.97 of the oracle (a trim that starved,
  // which the next decision undoes).
  int trims = 0;
  int starved_trims = 0;
  // The practice-lap track (kLapRun1): the lap's simulated wall time (compilation included),
  // and whether it gave a value (else run 1 keeps admission's).
  double lap_cost_seconds = 0;
  bool lap_gave_value = false;
};

inline constexpr double kMemoryMargins[] = {0.02, 0.05, 0.10};

// The pinned-runs track: runs that keep one value each (a checkpointed run), run 1 with no
// knowledge, run n decided from the trials of runs 1..n-1. "pinned_run2", or
// "pinned_run2_step_times_only" when the exporter saw no process figures (no shared process
// namespace: no busy share, no per-process memory or cpu).
inline constexpr int kPinnedRuns = 3;
std::string PinnedMethod(int run, bool process_figures);

// The practice-lap track: a run that keeps one value, decided from a lap of LapSteps steps
// (tuner/practice_lap.h) run with admission's value for the run, on the scenario's host, with
// the exporter's noise on its process figures and kLapStepReadNoise on each step time read.
inline constexpr char kLapRun1[] = "lap_run1";
inline constexpr double kLapStepReadNoise = 0.01;

std::vector<Scenario> BuildScenarios(uint64_t seed);
ScenarioResult Evaluate(const Scenario& scenario, uint64_t seed);

}  // namespace graintune::bench
