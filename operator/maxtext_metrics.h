// MaxText's metrics file, one JSON object per line, one line per training step, e.g.
//   {"learning/loss": 2.31, "perf/step_time_seconds": 4.3,
//    "perf/per_device_tflops_per_sec": 195.2, "perf/per_device_tokens_per_sec": 7620.0, "step": 41}
// MaxText truncates the file when a run starts (step 0) and writes each step's line one step
// late. Only the fields graintune uses are read; others are ignored.
#pragma once

#include <string_view>

#include "base/status.h"

namespace graintune::op {

struct StepSample {
  long step = 0;
  double step_time_seconds = 0;
  double tflops_per_device = -1;            // -1: not in the line
  double tokens_per_device_per_second = -1;  // -1: not in the line
};

// Error (with the reason) for lines that are not JSON objects, lack step or step time, or hold
// negative / non-finite values.
Result<StepSample> ParseMetricsLine(std::string_view line);

}  // namespace graintune::op
