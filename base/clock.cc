#include "base/clock.h"

namespace graintune {
namespace {

class MachineClock final : public Clock {
 public:
  SteadyTime SteadyNow() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
};

}  // namespace

const Clock& RealClock() {
  static const MachineClock clock;
  return clock;
}

}  // namespace graintune
