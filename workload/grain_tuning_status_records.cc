// The status's entries to and from the tuner's records (Trial, RunRecord): grain_tuning_status.h.
#include "workload/grain_tuning_status.h"

#include <algorithm>
#include <cmath>

#include "tuner/trial.h"

namespace graintune::workload {
namespace {

// Status figures rounded to what a measurement can tell (and what a table can show).
// Divides by an integral scale so the result is the double nearest the decimal (195.1, not
// 195.10000000000002).
double Round(double v, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(v * scale) / scale;
}

}  // namespace

TrialStatus TrialStatusOf(const Trial& t) {
  TrialStatus s{.attempt = t.attempt, .workers = t.workers};
  s.oom_killed = t.oom_killed;
  s.samples = t.samples;
  if (t.samples > 0) {
    s.step_time_p50_seconds = Round(t.step_seconds_p50, 0.001);
    s.step_time_p90_seconds = Round(t.step_seconds_p90, 0.001);
    s.step_time_mean_seconds = Round(t.step_seconds_mean, 0.001);
    s.tokens_per_second = Round(t.tokens_per_second_per_host, 1);
    s.stall_fraction = Round(std::clamp(t.stall_fraction, 0.0, 1.0), 0.001);
    s.data_bound = IsDataBound(t);
    if (t.buffered_step_seconds > 0) s.buffered_step_seconds = Round(t.buffered_step_seconds, 0.001);
    if (t.tflops_per_device > 0) s.tflops_per_device = Round(t.tflops_per_device, 0.1);
  }
  if (t.worker_busy_fraction >= 0) s.worker_busy_fraction = t.worker_busy_fraction;
  if (t.worker_memory_bytes > 0) s.worker_memory_bytes = t.worker_memory_bytes;
  if (t.trainer_memory_bytes > 0) s.trainer_memory_bytes = t.trainer_memory_bytes;
  if (t.trainer_cpu_cores >= 0) s.trainer_cpu_cores = t.trainer_cpu_cores;
  return s;
}

Trial TrialOf(const TrialStatus& s) {
  Trial t;
  t.attempt = s.attempt;
  t.workers = s.workers;
  t.step_seconds_p50 = s.step_time_p50_seconds.value_or(0.0);
  t.step_seconds_p90 = s.step_time_p90_seconds.value_or(0.0);
  t.step_seconds_mean = s.step_time_mean_seconds.value_or(t.step_seconds_p50);
  t.tokens_per_second_per_host = s.tokens_per_second.value_or(0.0);
  t.tflops_per_device = s.tflops_per_device.value_or(0.0);
  t.stall_fraction = s.stall_fraction.value_or(0.0);
  t.oom_killed = s.oom_killed.value_or(false);
  t.samples = s.samples.value_or(0);
  t.buffered_step_seconds = s.buffered_step_seconds.value_or(0.0);
  t.worker_busy_fraction = s.worker_busy_fraction.value_or(-1.0);
  t.worker_memory_bytes = s.worker_memory_bytes.value_or(0.0);
  t.trainer_memory_bytes = s.trainer_memory_bytes.value_or(0.0);
  t.trainer_cpu_cores = s.trainer_cpu_cores.value_or(-1.0);
  // The spread is not stored; a stored data-bound verdict is kept through it.
  if (s.data_bound.value_or(false)) t.step_spread = 2 * kDataBoundSpread;
  return t;
}

std::map<std::string, RunRecord> RunRecordsOf(const std::vector<RunStatus>& runs) {
  std::map<std::string, RunRecord> out;
  for (const RunStatus& r : runs)
    if (!r.checkpoint_dir.empty() && r.workers > 0)
      out.insert({r.checkpoint_dir, RunRecord{r.workers, r.first_attempt.value_or(0)}});
  return out;
}

RunStatus RunStatusOf(const std::string& checkpoint_dir, const RunRecord& run) {
  return {.checkpoint_dir = checkpoint_dir, .workers = run.workers, .first_attempt = run.first_attempt};
}

}  // namespace graintune::workload
