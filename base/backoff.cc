#include "base/backoff.h"

#include <algorithm>

namespace graintune {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int failures) {
  const double max_ms = static_cast<double>(policy.max.count());
  double ms = static_cast<double>(policy.initial.count());
  for (int i = 1; i < failures && ms < max_ms; ++i) ms *= policy.factor;
  return std::chrono::milliseconds(static_cast<long long>(std::min(ms, max_ms)));
}

std::chrono::milliseconds Jittered(std::chrono::milliseconds period, double spread) {
  if (spread <= 0 || period.count() <= 0) return period;
  thread_local std::mt19937_64 rng(std::random_device{}());
  const auto most = static_cast<long long>(static_cast<double>(period.count()) * spread);
  std::uniform_int_distribution<long long> pick(0, std::max(0LL, most));
  return period + std::chrono::milliseconds(pick(rng));
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
