#include "tuner/trial.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace graintune {
namespace {

double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] * (1 - frac) + values[hi] * frac;
}

double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

bool IsDataBound(const Trial& trial) {
  return trial.worker_busy_fraction >= kSaturatedBusyFraction || trial.draining ||
         trial.step_spread > kDataBoundSpread;
}

bool IsSaturated(const Trial& trial) {
  return IsDataBound(trial) || trial.worker_busy_fraction >= kSpareBusyFraction;
}

double RateOf(const Trial& t, double busy_margin) {
  double busy = 1.0;
  if (busy_margin > 0 && t.worker_busy_fraction > 0)
    busy = std::min(1.0, std::max(t.worker_busy_fraction, 0.05) + busy_margin);
  else if (t.worker_busy_fraction > 0.05)
    busy = t.worker_busy_fraction;
  return t.tokens_per_second_per_host / (t.workers * busy);
}

Result<Trial> SummarizeSteps(const std::vector<double>& step_seconds,
                             double tokens_per_step_per_host, int warmup_steps) {
  for (double s : step_seconds) {
    if (!std::isfinite(s) || s < 0)
      return Status::Error("step times must be finite and >= 0");
  }
  if (warmup_steps < 0) warmup_steps = 0;
  if (step_seconds.size() < static_cast<size_t>(warmup_steps + 2 * kMinSteadySamples)) {
    return Status::Error("need at least " + std::to_string(warmup_steps + 2 * kMinSteadySamples) +
                         " steps to judge steady state, got " +
                         std::to_string(step_seconds.size()));
  }
  const std::vector<double> after(step_seconds.begin() + warmup_steps, step_seconds.end());
  const size_t half = after.size() / 2;
  const std::vector<double> early(after.begin(), after.begin() + static_cast<long>(half));
  const std::vector<double> steady(after.begin() + static_cast<long>(half), after.end());

  Trial trial;
  trial.samples = static_cast<int>(steady.size());
  trial.step_seconds_mean = Mean(steady);
  trial.step_seconds_p50 = Percentile(steady, 0.5);
  trial.step_seconds_p90 = Percentile(steady, 0.9);
  const double p10 = Percentile(steady, 0.1);
  trial.step_spread =
      trial.step_seconds_p50 > 0 ? (trial.step_seconds_p90 - p10) / trial.step_seconds_p50 : 0;
  trial.draining = Mean(steady) > kDrainSlowdown * Mean(early);
  const size_t first = std::min<size_t>(kMinSteadySamples, early.size());
  trial.buffered_step_seconds =
      Percentile(std::vector<double>(early.begin(), early.begin() + static_cast<long>(first)), 0.5);
  trial.tokens_per_second_per_host =
      trial.step_seconds_mean > 0 ? tokens_per_step_per_host / trial.step_seconds_mean : 0;
  trial.stall_fraction =
      trial.step_seconds_mean > 0 ? std::clamp(1.0 - p10 / trial.step_seconds_mean, 0.0, 1.0) : 0;
  return trial;
}

}  // namespace graintune
