// A discrete-event model of one MaxText host fed by a Grain multiprocess pipeline.
//
// What it models, and why (each shape is visible in the measured v6e-32 logs):
// - N worker processes, each producing whole batches at a per-worker token rate with
//   log-normal jitter, after a start-up delay. The trainer takes batches in strict round-robin
//   order (Grain's mp_prefetch), so one slow worker stalls the step even when others are ready.
// - Each worker holds at most per_worker_buffer + 1 finished batches, then waits: the buffer
//   fills during compilation, which hides a data-bound pipeline for several steps.
// - The first step compiles on the host (blocking) once its batch is there.
// - Dispatch is asynchronous with `dispatch_depth` steps in flight: a step whose batch was
//   already waiting returns almost at once, which gives the slow/near-zero pairs of the logs.
// - CPU contention: when workers plus the trainer's cores exceed the host's, every process gets
//   its share (workers and the trainer's step both slow down).
// - Memory: the trainer plus every worker (its process and its buffered batches) above the
//   host's memory is an OOM kill before the first step.
// Deterministic for a given seed. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <vector>

namespace graintune {

struct PipelineParams {
  int workers = 1;
  int per_worker_buffer = 1;
  double tokens_per_step = 65536;               // per host
  double tokens_per_second_per_worker = 65536.0 / 30.0;  // at a full core: 30 s a batch
  double worker_jitter_cv = 0.03;
  double worker_startup_seconds = 0.5;
  double worker_memory_bytes = 2.0 * 1024 * 1024 * 1024;
  double element_bytes = 1.5e6;                 // one batch in memory
  double compute_step_seconds = 4.3;
  double compute_jitter_cv = 0.003;
  double compile_seconds = 25.0;
  double host_overhead_seconds = 0.006;         // a dispatch that did not wait
  int dispatch_depth = 2;
  // The host.
  double host_cpu_cores = 180;
  double host_memory_bytes = 700.0 * 1024 * 1024 * 1024;
  double trainer_cpu_cores = 4;
  double trainer_memory_bytes = 64.0 * 1024 * 1024 * 1024;
};

struct SimulationResult {
  std::vector<double> step_seconds;  // as MaxText would report them, step 1 first
  bool oom = false;
  double data_wait_fraction = 0;     // share of wall time the trainer waited for batches
  // What graintune's exporter reads from /proc in the pod (shared PID namespace), over the
  // second half of the run: the share of time worker processes were runnable rather than
  // blocked on a full buffer, their peak resident memory, and the trainer's.
  double worker_busy_fraction = 0;
  // The same share counting the batches workers start beyond the last step (refilling their
  // buffers), which the exporter sees too: without them a run shorter than workers x
  // (per_worker_buffer + 1) steps reads its workers idle while they refill.
  double worker_busy_fraction_with_work_ahead = 0;
  double worker_memory_bytes = 0;
  double trainer_memory_bytes = 0;
  double trainer_cpu_cores = 0;
};

// The calibration found on the v6e-32 Llama3-8B step logs
// (tuner/testdata/v6e-32-llama3-8b-steps.csv; see calibration.h).
PipelineParams SeedCalibratedParams();

SimulationResult Simulate(const PipelineParams& params, int steps, uint64_t seed);

// The host memory the trainer and params.workers workers hold (each worker's process and its
// buffered batches); above params.host_memory_bytes, Simulate reports an OOM kill.
double HostMemoryInUse(const PipelineParams& params);

// Mean tokens/s per host over steps [from, end) of a long run; 0 for an OOM run.
double SteadyTokensPerSecond(const PipelineParams& params, int steps, uint64_t seed);

}  // namespace graintune
