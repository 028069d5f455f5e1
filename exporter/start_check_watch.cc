#include "exporter/start_check_watch.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "base/log.h"

namespace graintune::exporter {

std::optional<telemetry::StartCheckReport> StartCheckWatch::Poll() {
  struct stat st {};
  if (::stat(report_file_.c_str(), &st) != 0) return std::nullopt;
  if (st.st_size == seen_size_ && st.st_mtim.tv_sec == seen_mtime_.tv_sec && st.st_mtim.tv_nsec == seen_mtime_.tv_nsec)
    return std::nullopt;
  seen_size_ = st.st_size;
  seen_mtime_ = st.st_mtim;
  if (static_cast<size_t>(st.st_size) > telemetry::kMaxStartCheckReportBytes) {
    LogLine(LogLevel::kWarning) << report_file_ << " is larger than a start check's report; not read";
    return std::nullopt;
  }
  std::ifstream in(report_file_);
  std::stringstream text;
  text << in.rdbuf();
  Result<telemetry::StartCheckReport> report = telemetry::ParseStartCheckReport(text.str());
  if (!report.ok()) {
    LogLine(LogLevel::kWarning) << report_file_ << ": " << report.error();
    return std::nullopt;
  }
  LogLine(LogLevel::kInfo) << "the trainer's start check: "
                           << (report->started_value ? std::to_string(*report->started_value) : std::string("?"))
                           << " workers (" << report->why << ")";
  return std::move(report).value();
}

}  // namespace graintune::exporter
