// Polling for tests and the demo: the control plane acts asynchronously (controllers, the
// garbage collector, the JobSet controller), so a test waits for a condition, never for a
// fixed time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace graintune::testing {

// Calls `done` every 250 ms until it returns true or `limit` has passed, and returns its last
// answer. When `interrupted` is given and becomes true, returns false at once.
inline bool WaitFor(const std::function<bool()>& done, std::chrono::seconds limit,
                    const std::atomic<bool>* interrupted = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (interrupted && *interrupted) return false;
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return !(interrupted && *interrupted) && done();
}

}  // namespace graintune::testing
