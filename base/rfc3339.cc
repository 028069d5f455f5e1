#include "base/rfc3339.h"

#include <cstdio>
#include <string_view>

namespace graintune {
namespace {

std::tm UtcOf(std::time_t secs) {
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}

}  // namespace

std::string FormatRfc3339(Clock::WallTime t) {
  const std::tm tm = UtcOf(std::chrono::system_clock::to_time_t(t));
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatRfc3339Micros(Clock::WallTime t) {
  const auto since_epoch = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  const auto secs = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const std::tm tm = UtcOf(static_cast<std::time_t>(secs.count()));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>((since_epoch - secs).count()));
  return buf;
}

std::optional<std::time_t> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* end = text.size() >= 20 ? strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) : nullptr;
  if (!end) return std::nullopt;
  if (*end == '.')
    for (++end; *end >= '0' && *end <= '9'; ++end) {}
  if (std::string_view(end) != "Z") return std::nullopt;
  return timegm(&tm);
}

}  // namespace graintune
