// Backoff: the one exponential backoff of graintune. After n failures in a row the delay is
// initial * factor^(n-1), at most max; with jitter it is drawn uniformly from [delay/2, delay]
// (full jitter keeps two replicas, or many informers after an API server restart, from
// retrying in lockstep). Reset() after a success starts again from initial.
//
// Who uses it: the work queue's rate limiter (one per key, no jitter, so a test can name the
// delay), the exporter scraper (one per exporter), and kube's retry loops (with jitter). Leader
// election's retry period is Jittered().
//
// Thread-safety: none; the owner guards it. The delay is bounded by max and never overflows
// (the exponent stops growing once max is reached).
#pragma once

#include <chrono>
#include <random>

namespace graintune {

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{std::chrono::seconds(30)};
  double factor = 2.0;
  bool jitter = true;
};

// The delay after `failures` failures in a row, without jitter: initial for 1 (and for 0),
// initial * factor^(failures-1) after that, at most max.
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int failures);

// `period` plus a share of it drawn uniformly from [0, spread] (0.2: up to 20% more), so that
// candidates started together do not retry in lockstep (as client-go's wait.Jitter). A spread
// of 0 or less returns `period`.
std::chrono::milliseconds Jittered(std::chrono::milliseconds period, double spread);

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {});
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double factor = 2.0)
      : Backoff(BackoffPolicy{.initial = initial, .max = max, .factor = factor}) {}

  // Counts one more failure and answers the delay before the next try.
  std::chrono::milliseconds Next();
  void Reset() { failures_ = 0; }
  // Failures in a row since construction or the last Reset.
  int failures() const { return failures_; }

 private:
  BackoffPolicy policy_;
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace graintune
