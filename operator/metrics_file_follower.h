// Follows a MaxText metrics file as it grows (tail -F for JSON lines): each Poll() returns the
// complete lines appended since the last one. A line still being written is kept until its
// newline arrives. The file being truncated, replaced or removed (a new run in the same pod)
// restarts from its beginning and is reported. Malformed lines are counted and skipped; a line
// longer than the cap is dropped as malformed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "operator/maxtext_metrics.h"

namespace graintune::op {

class MetricsFileFollower {
 public:
  explicit MetricsFileFollower(std::string path, size_t max_line_bytes = 1u << 20);

  struct Update {
    std::vector<StepSample> samples;
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
};

}  // namespace graintune::op
