#include "exporter/metrics_file_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace graintune::exporter {

MetricsFileFollower::MetricsFileFollower(std::string path, size_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes) {}

void MetricsFileFollower::Take(const telemetry::MetricsLine& line, Update& u) {
  if (!line.sample) return;
  const bool renamed = !line.run_name.empty() && !run_name_.empty() && line.run_name != run_name_;
  if (last_step_ >= 0 && (line.sample->step <= last_step_ || renamed)) {
    u.restarted = true;
    u.samples.clear();  // the earlier run's steps: the new run replaces them
  }
  last_step_ = line.sample->step;
  if (!line.run_name.empty()) run_name_ = line.run_name;
  u.samples.push_back(*line.sample);
}

MetricsFileFollower::Update MetricsFileFollower::Poll() {
  Update u;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return u;  // not written yet (or removed): nothing new
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return u;
  }
  if ((inode_ != 0 && st.st_ino != inode_) || st.st_size < offset_) {
    u.restarted = offset_ > 0 || inode_ != 0;
    offset_ = 0;
    partial_.clear();
    skipping_long_line_ = false;
    last_step_ = -1;
    run_name_.clear();
  }
  inode_ = st.st_ino;
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), offset_);
    if (n <= 0) break;
    offset_ += n;
    size_t start = 0;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') continue;
      if (skipping_long_line_) {
        skipping_long_line_ = false;
        start = static_cast<size_t>(i) + 1;
        continue;
      }
      partial_.append(buf + start, static_cast<size_t>(i) - start);
      start = static_cast<size_t>(i) + 1;
      if (partial_.empty()) continue;
      ++u.lines;
      if (Result<telemetry::MetricsLine> line = telemetry::ParseMetricsLine(partial_); line.ok()) {
        Take(*line, u);
      } else {
        ++u.malformed;
      }
      partial_.clear();
    }
    if (!skipping_long_line_) partial_.append(buf + start, static_cast<size_t>(n) - start);
    if (partial_.size() > max_line_bytes_) {
      ++u.lines;
      ++u.malformed;
      partial_.clear();
      skipping_long_line_ = true;
    }
  }
  ::close(fd);
  return u;
}

}  // namespace graintune::exporter
