// What the exporter saw of its pod's practice lap (docs/practice-lap.md), as the /steps
// document's "lap" object, and the launcher's result file it reads:
//   "lap": {"steps": [{"step": 3, "step_time_seconds": 0.52}, ...],
//           "process": {"workers": 2, "worker_busy_fraction": 0.85, ...},
//           "result": {"completed": true, "outcome": "completed", "wall_seconds": 39.8,
//                      "steps": 60, "workers": 2, "trainer_compile": "cache hit"},
//           "result_age_seconds": 4.5}
// `process` is the lap's, not the last sample's: the workers' busy share averaged over the
// samples taken while the lap stepped (its first steps, the compile and the buffers' first fill,
// left out), and the highest memory any sample showed. `result` is the launcher's result file
// as it wrote it (contract/lap_result.h), absent while the lap runs.
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
#include "contract/lap_result.h"

namespace graintune::telemetry {

using contract::LapResult;  // contract/lap_result.h: the launcher's result file

struct LapReport {
  std::vector<StepSample> steps;
  std::optional<ProcessFigures> process;
  std::optional<LapResult> result;
  double result_age_seconds = -1;  // < 0 while there is no result
};

// The most a lap may report (tuner/practice_lap.h's kMaxLapSteps, with room).
inline constexpr size_t kMaxLapStepsReported = 10000;

nlohmann::json ToJson(const LapReport& report);

// The "lap" object of an answer; errors start "rejected: ".
Result<LapReport> ParseLapReport(const nlohmann::json& lap);

}  // namespace graintune::telemetry
