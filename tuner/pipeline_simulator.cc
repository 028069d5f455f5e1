#include "tuner/pipeline_simulator.h"

#include <algorithm>
#include <numeric>

#include "tuner/seeded_random.h"

namespace graintune {

PipelineParams SeedCalibratedParams() {
  PipelineParams p;  // the defaults above are the calibrated figures
  return p;
}

double HostMemoryInUse(const PipelineParams& p) {
  return p.trainer_memory_bytes +
         std::max(1, p.workers) * (p.worker_memory_bytes + (p.per_worker_buffer + 1) * p.element_bytes);
}

SimulationResult Simulate(const PipelineParams& p, int steps, uint64_t seed) {
  SimulationResult result;
  const int n = std::max(1, p.workers);
  if (HostMemoryInUse(p) > p.host_memory_bytes) {
    result.oom = true;
    return result;
  }
  if (steps <= 0) return result;

  // Every process gets its share of the cores when they are oversubscribed.
  const double speed = std::min(1.0, p.host_cpu_cores / (n + p.trainer_cpu_cores));
  const double batch_seconds = p.tokens_per_step / (p.tokens_per_second_per_worker * speed);
  const double compute_seconds = p.compute_step_seconds / speed;
  const int hold = std::max(0, p.per_worker_buffer) + 1;

  SeededRandom random(seed);
  const size_t count = static_cast<size_t>(steps);
  std::vector<double> ready(count), taken(count), device_end(count), started(count);
  std::vector<double> worker_free(static_cast<size_t>(n), p.worker_startup_seconds);

  double now = 0;      // the trainer loop's clock: end of the previous iteration
  double waited = 0;
  for (size_t k = 0; k < count; ++k) {
    // Produce batch k on its worker (round robin). The worker may start it once its previous
    // batch is done and it holds fewer than `hold` unconsumed batches.
    const size_t w = k % static_cast<size_t>(n);
    double start = worker_free[w];
    if (k >= static_cast<size_t>(hold * n)) start = std::max(start, taken[k - hold * n]);
    started[k] = start;
    ready[k] = start + batch_seconds * random.Jitter(p.worker_jitter_cv);
    worker_free[w] = ready[k];

    // The trainer takes batch k, compiles on the first step, dispatches asynchronously and
    // blocks while more than dispatch_depth steps are in flight.
    const double take = std::max(now, ready[k]);
    waited += take - now;
    taken[k] = take;
    double dispatch = take + p.host_overhead_seconds;
    if (k == 0) dispatch += p.compile_seconds;
    const double device_start = k == 0 ? dispatch : std::max(dispatch, device_end[k - 1]);
    device_end[k] = device_start + compute_seconds * random.Jitter(p.compute_jitter_cv);
    double end = dispatch;
    const int depth = std::max(1, p.dispatch_depth);
    if (k >= static_cast<size_t>(depth)) end = std::max(end, device_end[k - depth]);
    result.step_seconds.push_back(end - now);
    now = end;
  }
  result.data_wait_fraction = now > 0 ? waited / now : 0;

  // Worker busy time inside the second half of the run.
  const double window_start = now - std::accumulate(result.step_seconds.begin() +
                                                        static_cast<long>(count / 2),
                                                    result.step_seconds.end(), 0.0);
  double busy = 0;
  for (size_t k = 0; k < count; ++k) {
    busy += std::max(0.0, std::min(ready[k], now) - std::max(started[k], window_start));
  }
  const double window = now - window_start;
  result.worker_busy_fraction = window > 0 ? std::min(1.0, busy / (n * window)) : 0;
  // The batches the workers start beyond the last step (each as soon as a batch it held was
  // taken) are busy time inside the window too.
  SeededRandom ahead(seed + 1);
  for (size_t k = count; k < count + static_cast<size_t>(hold * n); ++k) {
    const size_t w = k % static_cast<size_t>(n);
    double start = worker_free[w];
    if (k >= static_cast<size_t>(hold * n)) start = std::max(start, taken[k - hold * n]);
    const double ready_k = start + batch_seconds * ahead.Jitter(p.worker_jitter_cv);
    worker_free[w] = ready_k;
    busy += std::max(0.0, std::min(ready_k, now) - std::max(start, window_start));
  }
  result.worker_busy_fraction_with_work_ahead = window > 0 ? std::min(1.0, busy / (n * window)) : 0;
  result.worker_memory_bytes = p.worker_memory_bytes + hold * p.element_bytes;
  result.trainer_memory_bytes = p.trainer_memory_bytes;
  result.trainer_cpu_cores = p.trainer_cpu_cores;
  return result;
}

double SteadyTokensPerSecond(const PipelineParams& params, int steps, uint64_t seed) {
  SimulationResult r = Simulate(params, steps, seed);
  if (r.oom || r.step_seconds.size() < 4) return 0;
  const size_t from = r.step_seconds.size() / 2;
  const double seconds =
      std::accumulate(r.step_seconds.begin() + static_cast<long>(from), r.step_seconds.end(), 0.0);
  return seconds > 0 ? params.tokens_per_step * static_cast<double>(r.step_seconds.size() - from) /
                           seconds
                     : 0;
}

}  // namespace graintune
