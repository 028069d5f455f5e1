// LapWatch: the exporter's view of its pod's practice lap (graintune-launcher; docs/practice-lap.md).
// It follows the lap's metrics file, reads the launcher's result file once it appears (both on
// the exporter's volume), and keeps the lap's process figures: the workers' busy share averaged
// over the samples taken while the lap stepped past its warm-up (the compile and the buffers'
// first fill, when every worker reads busy or idle whatever their count, left out) and before
// its result, and the highest worker and trainer memory any of those samples showed. Samples
// after the result are the trainer's, never the lap's; once it has the result, the file is read
// again only while it says the launcher's watcher is to add its verdict on the trainer's compile
// ("watching"). A pod without a lap shows nothing.
// Not thread-safe: the exporter's poll loop owns it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "exporter/metrics_file_follower.h"
#include "telemetry/lap_report.h"

namespace graintune::exporter {

class LapWatch {
 public:
  static constexpr size_t kMaxResultBytes = 64 * 1024;
  using TimePoint = std::chrono::steady_clock::time_point;
  LapWatch(std::string metrics_file, std::string result_file, int warmup_steps = 2);

  // Reads both files once; `sample` is the process sample taken now (nullopt: none).
  void Poll(TimePoint now, const std::optional<telemetry::ProcessFigures>& sample);
  // What was seen of the lap so far; nullopt before its first step or its result.
  std::optional<telemetry::LapReport> Report(TimePoint now) const;

 private:
  void Accumulate(const telemetry::ProcessFigures& sample);
  // The result file as it is now; nullopt while there is none.
  std::optional<Result<contract::LapResult>> ReadResultFile() const;

  MetricsFileFollower follower_;
  std::string result_file_;
  int warmup_steps_;
  telemetry::LapReport report_;
  std::optional<TimePoint> result_seen_;
  bool result_refused_ = false;  // a result file that is not one was logged once
  double busy_sum_ = 0, cpu_sum_ = 0;
  int busy_samples_ = 0, cpu_samples_ = 0;
};

}  // namespace graintune::exporter
