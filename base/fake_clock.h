// FakeClock: a Clock (base/clock.h) that moves only when a test says so. Steady time starts at
// the steady epoch, wall time at `wall_start` (by default 2026-11-30T06:00:00Z); Advance moves
// both by the same amount, so a delay and the timestamps written during it agree.
//
// Thread-safety: every method may be called from any thread (a test advances it while the code
// under test reads it from its own threads).
#pragma once

#include <mutex>

#include "base/clock.h"

namespace graintune {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(WallTime wall_start = WallTime(std::chrono::seconds(1796018400)))
      : wall_(wall_start) {}

  SteadyTime SteadyNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return steady_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return wall_;
  }
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    steady_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }

 private:
  mutable std::mutex mu_;
  SteadyTime steady_{};
  WallTime wall_;
};

}  // namespace graintune
