// The exporter's reading of the trainer's start check report (telemetry/start_check_report.h),
// a file the check writes whole (renamed into place) beside MaxText's metrics file, once per
// start of the trainer. Poll() reads it when it appeared or changed (size or modification time)
// and returns the report then, nullopt otherwise; a file that is no report is logged once per
// change and ignored; a file over kMaxStartCheckReportBytes is not read. Not thread-safe (one
// poller).
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "telemetry/start_check_report.h"

namespace graintune::exporter {

class StartCheckWatch {
 public:
  explicit StartCheckWatch(std::string report_file) : report_file_(std::move(report_file)) {}

  std::optional<telemetry::StartCheckReport> Poll();

 private:
  std::string report_file_;
  long long seen_size_ = -1;
  struct timespec seen_mtime_ = {};
};

}  // namespace graintune::exporter
