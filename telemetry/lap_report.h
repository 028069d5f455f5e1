// What the exporter saw of its pod's practice lap (docs/practice-lap.md), as the /steps
// document's "lap" object, and the launcher's result file it reads:
//   "lap": {"steps": [{"step": 3, "step_time_seconds": 0.52}, ...],
//           "process": {"workers": 2, "worker_busy_fraction": 0.85, ...},
//           "result": {"completed": true, "outcome": "completed", "wall_seconds": 39.8,
//                      "steps": 60, "workers": 2, "trainer_compile": "cache hit"},
//           "result_age_seconds": 4.5}
// `process` is the lap's, not the last sample's: the workers' busy share averaged over the
// samples taken while the lap stepped (its first steps, the compile and the buffers' first fill,
// left out), and the highest memory any sample showed. `result` is absent while the lap runs;
// "trainer_compile" (with "trainer_compile_why" when "unknown") says "watching" while the
// launcher's watcher waits for the trainer's first step, and its verdict once it has one
// (telemetry/trainer_compile.h); it is absent when nothing watches.
// `result_age_seconds` says how long ago the exporter first saw it, by its own clock, so the
// operator knows how much of the launcher's answer wait is left without trusting two clocks.
// Parsing is bounded as ParseStepsDocument is: an answer comes from a pod its owner controls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "telemetry/maxtext_metrics.h"
#include "telemetry/process_figures.h"
#include "telemetry/trainer_compile.h"

namespace graintune::telemetry {

// How the lap ended, as graintune-launcher writes it (--result-file).
struct LapResult {
  bool completed = false;   // exited 0
  std::string outcome;      // "completed", "exited 1", "killed by signal 9", "timed out after 60 s"
  double wall_seconds = 0;
  int steps = 0;            // the steps it was asked to run
  int workers = 0;          // the grain_worker_count it ran with
  // Whether the trainer after it found its train step in the cache the lap filled; nullopt until
  // the launcher's watcher judged it (or when nothing watched).
  std::optional<TrainerCompileVerdict> trainer_compile;
  // The launcher left a watcher whose verdict is still to come ("trainer_compile": "watching").
  bool trainer_compile_watching = false;
};

struct LapReport {
  std::vector<StepSample> steps;
  std::optional<ProcessFigures> process;
  std::optional<LapResult> result;
  double result_age_seconds = -1;  // < 0 while there is no result
};

// The most a lap may report (tuner/practice_lap.h's kMaxLapSteps, with room).
inline constexpr size_t kMaxLapStepsReported = 10000;
inline constexpr size_t kMaxLapOutcomeBytes = 256;  // also trainer_compile_why

nlohmann::json ToJson(const LapResult& result);
nlohmann::json ToJson(const LapReport& report);

// The launcher's result file; an error names what is wrong with it.
Result<LapResult> ParseLapResult(const std::string& text);
// The "lap" object of an answer; errors start "rejected: ".
Result<LapReport> ParseLapReport(const nlohmann::json& lap);

}  // namespace graintune::telemetry
