#include "tuner/grain_baseline.h"

#include <algorithm>
#include <cmath>

#include "tuner/counts.h"

namespace graintune {

int GrainPickPerformanceWorkers(double element_bytes, double cpu_count, double ram_budget_mb) {
  const double element_mb = std::max(element_bytes / (1024.0 * 1024.0), 1e-6);
  const double by_ram = std::floor(ram_budget_mb / element_mb);
  return std::max(1, CountOf(std::min(by_ram, std::floor(cpu_count))));
}

}  // namespace graintune
