// One line of MaxText's metrics file (`metrics_file=`, JSON lines) as the stand-in trainers
// write it: the step, its time, and the per-chip TFLOP/s and tokens/s that time gives when a
// fed step (`compute_seconds`) runs at the measured 195 TFLOP/s of Llama3-8B on v6e.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

namespace graintune::testing {

inline constexpr double kFedTflopsPerChip = 195.0;

inline void AppendMetricsLine(const std::string& file, int step, double seconds, double compute_seconds,
                              double tokens_per_step) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "{\"learning/loss\": 2.5, \"perf/step_time_seconds\": %.4f, "
                "\"perf/per_device_tflops_per_sec\": %.2f, "
                "\"perf/per_device_tokens_per_sec\": %.1f, \"step\": %d}\n",
                seconds, seconds > 0 ? kFedTflopsPerChip * compute_seconds / seconds : 0.0,
                seconds > 0 ? tokens_per_step / 4.0 / seconds : 0.0, step);
  std::ofstream(file, std::ios::app) << line;
}

}  // namespace graintune::testing
