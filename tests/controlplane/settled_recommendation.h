// The recommendation for an attempt as a restart reads it. While the previous attempt runs,
// each scrape may refine its trial and with it the value for the next attempt (seen in CI: 16,
// then 14 a few steps later), so a test that restarts a workload and expects the recommended
// value must first wait for the trial to settle.
//
// Polled with each GrainTuning status: Settled() holds once the recommendation for `attempt` is
// there and the previous attempt's trial has not changed for 3 s (its trainer wrote its last
// step). Plain logic over status JSON; the caller owns the polling and its deadline.
#pragma once

#include <chrono>

#include "kube/client.h"

namespace graintune::testing {

class SettledRecommendation {
 public:
  explicit SettledRecommendation(int attempt) : attempt_(attempt) {}
  bool Settled(const kube::Json& status);
  int workers() const { return workers_; }

 private:
  int attempt_;
  int workers_ = 0, last_samples_ = -1;
  std::chrono::steady_clock::time_point stable_since_ = std::chrono::steady_clock::now();
};

}  // namespace graintune::testing
