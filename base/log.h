// One leveled log for graintune's binaries: lines on stderr, "LEVEL program: message", at or
// above the process's level (--log-level, default info). Each line is written whole under a
// lock, so lines of concurrent threads never interleave.
//   error    something failed that needs a person (a write refused, a cache that cannot start)
//   warning  graintune carried on, but less well (a source unavailable, a value left as written)
//   info     lifecycle: serving, leading, certificate renewed, GrainTuning forgotten
//   debug    one line per admission (webhook) or reconcile (operator), for troubleshooting
// Thread-safe. The level is process-wide and set once at start-up.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "base/status.h"

namespace graintune {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

std::string ToString(LogLevel level);
// "error" | "warning" | "info" | "debug"; an error naming the accepted values otherwise.
Result<LogLevel> ParseLogLevel(std::string_view text);

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Writes "LEVEL program: message" when `level` is enabled. SetLogProgram names the program.
void SetLogProgram(std::string_view program);
void Log(LogLevel level, std::string_view message);

// A line built with <<, logged when it goes out of scope: LogLine(LogLevel::kInfo) << "x " << 3;
// Nothing is formatted when its level is off.
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level), enabled_(LogEnabled(level)) {}
  ~LogLine() {
    if (enabled_) Log(level_, out_.str());
  }
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  template <typename T>
  LogLine& operator<<(const T& value) {
    if (enabled_) out_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  bool enabled_;
  std::ostringstream out_;
};

}  // namespace graintune
