#include "base/backoff.h"

#include <algorithm>

namespace graintune {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int failures) {
  const double max_ms = static_cast<double>(policy.max.count());
  double ms = static_cast<double>(policy.initial.count());
  for (int i = 1; i < failures && ms < max_ms; ++i) ms *= policy.factor;
  return std::chrono::milliseconds(static_cast<long long>(std::min(ms, max_ms)));
}

Backoff::Backoff(BackoffPolicy policy)
    : policy_(policy), rng_(policy.jitter ? std::random_device{}() : 0) {}

std::chrono::milliseconds Backoff::Next() {
  if (failures_ < 1 << 20) ++failures_;
  const std::chrono::milliseconds delay = BackoffDelay(policy_, failures_);
  if (!policy_.jitter) return delay;
  std::uniform_int_distribution<long long> pick(delay.count() / 2, delay.count());
  return std::chrono::milliseconds(pick(rng_));
}

}  // namespace graintune
