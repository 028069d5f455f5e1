#include "tuner/grain_baseline.h"

#include <algorithm>
#include <cmath>

namespace graintune {

int GrainPickPerformanceWorkers(double element_bytes, double cpu_count, double ram_budget_mb) {
  const double element_mb = std::max(element_bytes / (1024.0 * 1024.0), 1e-6);
  const double by_ram = std::floor(ram_budget_mb / element_mb);
  // Within a million workers, so a hostile figure keeps the cast defined (NaN: one worker).
  const double workers = std::min(by_ram, std::floor(cpu_count));
  return std::isnan(workers) ? 1 : std::max(1, static_cast<int>(std::clamp(workers, 0.0, 1e6)));
}

}  // namespace graintune
