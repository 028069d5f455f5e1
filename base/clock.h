// Clock: where graintune reads the time, in the shape of Envoy's TimeSource. Two readings:
//  - steady time, for delays, deadlines and intervals (it never jumps);
//  - wall time, for the timestamps written to the API (RFC 3339, base/rfc3339.h) and for the
//    age of what the API says happened at a wall time.
// A binary uses RealClock() and hands it to the parts that read time, once; a test hands them a
// FakeClock (base/fake_clock.h) and moves time itself. What the product decides from the time
// reads a Clock; only a thread's own sleep (a condition variable's deadline, a request's
// timeout) waits on std::chrono::steady_clock, since no fake clock can make a thread sleep.
//
// Thread-safety: every method may be called from any thread. RealClock() lives for the process.
#pragma once

#include <chrono>

namespace graintune {

class Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  virtual SteadyTime SteadyNow() const = 0;
  virtual WallTime WallNow() const = 0;
};

// The machine's clocks: std::chrono::steady_clock and system_clock.
const Clock& RealClock();

}  // namespace graintune
