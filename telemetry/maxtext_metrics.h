// MaxText's metrics file, one JSON object per line, as maxtext 0.2.5's metric logger writes it:
//   {"learning/loss": 2.31, ..., "perf/step_time_seconds": 4.3,
//    "perf/per_device_tflops_per_sec": 195.2, "perf/per_device_tokens_per_sec": 7620.0,
//    "step": 41.0, "run_name": "my-run"}
// One line per training step, written one step late; step 0 is the compile step. MaxText
// truncates the file when a run starts at step 0, and appends otherwise (a run resumed from a
// checkpoint starts at that checkpoint's step). Its eval metrics ("eval/..." keys, no step time)
// share the file. Python's json writes NaN, Infinity and -Infinity as bare words (a diverged
// loss), which strict JSON refuses.
//
// Only the fields graintune uses are read; others are ignored. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace graintune::telemetry {

struct StepSample {
  long step = 0;
  double step_time_seconds = 0;
  double tflops_per_device = -1;            // -1: not in the line, or not finite
  double tokens_per_device_per_second = -1;  // -1: not in the line, or not finite
};

struct MetricsLine {
  // nullopt: a line MaxText writes that is no training step (eval metrics).
  std::optional<StepSample> sample;
  std::string run_name;  // "" when the line has none
};

// Error (with the reason) for lines that are not JSON objects (NaN and +-Infinity are read, as
// Python writes them), lack the step or a step line's step time, or hold a negative or
// non-finite step or step time. A NaN or infinite field graintune does not need (the loss) is
// no error; a non-finite tflops or tokens figure reads as absent.
Result<MetricsLine> ParseMetricsLine(std::string_view line);

}  // namespace graintune::telemetry
