// Follows a MaxText metrics file as it grows (tail -F for JSON lines): each Poll() returns the
// training steps in the complete lines appended since the last one. A line still being written
// is kept until its newline arrives. A new run in the same pod is reported as `restarted`, with
// only the new run's steps in the update: the file truncated, replaced or removed and written
// again; or, appended to, a step that is not after the last one (a run resumed from a
// checkpoint) or a different run_name. Malformed lines are counted and skipped; lines that are
// no training step (eval metrics) are counted as lines only; a line longer than the cap is
// dropped as malformed. Not thread-safe: one caller polls.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "telemetry/maxtext_metrics.h"

namespace graintune::exporter {

class MetricsFileFollower {
 public:
  explicit MetricsFileFollower(std::string path, size_t max_line_bytes = 1u << 20);

  struct Update {
    std::vector<telemetry::StepSample> samples;
    int lines = 0;       // complete lines read
    int malformed = 0;   // of which could not be used
    bool restarted = false;  // the file was truncated or replaced: samples are of a new run
  };
  Update Poll();

 private:
  std::string path_;
  size_t max_line_bytes_;
  off_t offset_ = 0;
  ino_t inode_ = 0;
  std::string partial_;
  bool skipping_long_line_ = false;
  long last_step_ = -1;   // of the current run; -1 before its first step
  std::string run_name_;  // of the current run's last step line that named one

  void Take(const telemetry::MetricsLine& line, Update& u);
};

}  // namespace graintune::exporter
