#include "tuner/figures.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace graintune {

std::string Fixed(double value, int digits) {
  // to_chars: the same correctly rounded digits as printf's %.*f, without its locale and
  // format parsing (reasons are formatted on every admission).
  char buf[352];  // DBL_MAX in fixed notation has 309 digits before the point
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, digits);
  if (ec != std::errc()) {
    std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
    return buf;
  }
  return std::string(buf, end);
}

std::string Compact(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e9) return Fixed(value / 1e9, 1) + "G";
  if (magnitude >= 1e6) return Fixed(value / 1e6, 1) + "M";
  if (magnitude >= 1e3) return Fixed(value / 1e3, 1) + "k";
  if (magnitude >= 10 || magnitude == std::floor(magnitude)) return Fixed(value, 0);
  return Fixed(value, 2);
}

std::string Bytes(double bytes) {
  constexpr double kKiB = 1024.0;
  if (bytes >= kKiB * kKiB * kKiB) return Fixed(bytes / (kKiB * kKiB * kKiB), 1) + " GiB";
  if (bytes >= kKiB * kKiB) return Fixed(bytes / (kKiB * kKiB), 0) + " MiB";
  if (bytes >= kKiB) return Fixed(bytes / kKiB, 0) + " KiB";
  return Fixed(bytes, 0) + " B";
}

}  // namespace graintune
