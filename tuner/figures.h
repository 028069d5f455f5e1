// Formatting of figures for reasons and tables a person reads: "15.2k", "41", "2.0 GiB".
// Pure functions; no locale dependence.
#pragma once

#include <string>

namespace graintune {

// Fixed-point with `digits` decimals ("4.30").
std::string Fixed(double value, int digits);
// Compact count: 950 -> "950", 15230 -> "15.2k", 2.5e6 -> "2.5M".
std::string Compact(double value);
// Bytes in binary units: "2.0 GiB", "512 MiB".
std::string Bytes(double bytes);

}  // namespace graintune
