// CountOf: a whole count from a figure that an object may make absurd (a cpu limit of "20P", a
// worker memory of one byte). Held within a million either way, beyond any host's workers, so
// the conversion to int is defined and every cap and budget after it still applies. NaN counts
// as none. Pure.
#pragma once

#include <algorithm>
#include <cmath>

namespace graintune {

inline int CountOf(double x) {
  constexpr double kCountBound = 1e6;
  return std::isnan(x) ? 0 : static_cast<int>(std::clamp(x, -kCountBound, kCountBound));
}

}  // namespace graintune
