// The fields an exporter's answer is made of (steps, process figures), written and read back
// the same way wherever they appear: the /steps document (step_log.h) and its lap
// (lap_report.h). Reading is bounded: every number must be finite and within the bounds
// step_log.h names, steps must rise; a problem is named in `problem` (empty when none).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/bounded_json.h"
#include "telemetry/maxtext_metrics.h"
#include "telemetry/process_figures.h"

namespace graintune::telemetry {

// What one answer may hold (far above anything MaxText or a TPU host reports).
inline constexpr size_t kMaxStepsPerAnswer = 20000;       // the exporter keeps at most this many
inline constexpr double kMaxStep = 1e12;
inline constexpr double kMaxStepSeconds = 86400;          // a day per step
inline constexpr double kMaxTflopsPerDevice = 1e6;        // (asynchronous dispatch reads ~1e5)
inline constexpr double kMaxTokensPerDevicePerSecond = 1e9;
inline constexpr double kMaxWorkersSeen = 100000;
inline constexpr double kMaxMemoryBytes = 1e15;
inline constexpr double kMaxCpuCores = 100000;


nlohmann::json StepJson(const StepSample& step);
nlohmann::json ProcessJson(const ProcessFigures& figures);

using contract::BoundedField;  // contract/bounded_json.h

// A steps array (at most `max_steps` entries; each a step with its time, rising).
std::vector<StepSample> ReadSteps(const nlohmann::json& steps, size_t max_steps, std::string& problem);
// A process object.
ProcessFigures ReadProcess(const nlohmann::json& process, std::string& problem);

}  // namespace graintune::telemetry
