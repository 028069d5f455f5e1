// Trial: what one attempt of a workload measured, and how it is summarised from step times.
//
// MaxText's step times are not i.i.d.: the first steps include compilation, asynchronous
// dispatch makes a slow step followed by a near-zero one when two batches arrive together,
// and a prefetch buffer filled during compilation hides a data-bound pipeline for several
// steps before it drains. SummarizeSteps therefore drops the warm-up, judges the later half of
// the run (steady state), uses the mean step time for throughput (a slow/near-zero pair
// averages out right) and flags data-bound behaviour from the spread and from a slowdown
// between the two halves. Pure functions.
#pragma once

#include <vector>

#include "base/status.h"

namespace graintune {

struct Trial {
  int attempt = 0;
  int workers = 0;
  double step_seconds_mean = 0;  // steady state
  double step_seconds_p50 = 0;
  double step_seconds_p90 = 0;
  double tokens_per_second_per_host = 0;
  double tflops_per_device = 0;  // 0 when not reported
  double step_spread = 0;        // (p90 - p10) / p50 of the steady window
  double stall_fraction = 0;     // estimated share of wall time waiting for data, 0..1
  bool draining = false;         // the second half ran clearly slower than the first
  bool oom_killed = false;
  int samples = 0;               // steady-state steps behind the figures
  // Median of the first steps after warm-up, while the prefetch buffer filled during compile
  // lasted: the compute step when the chips are fed (0 when unknown). A later trial running at
  // this pace was fed, even if it is slower than the estimated demand.
  double buffered_step_seconds = 0;
  // Process figures from graintune's exporter (shared PID namespace, /proc); < 0 or 0 when
  // not measured. A busy fraction near 1 means workers never waited on a full buffer.
  double worker_busy_fraction = -1;
  double worker_memory_bytes = 0;   // peak resident memory of one Grain worker
  double trainer_memory_bytes = 0;  // peak resident memory of the trainer process
  double trainer_cpu_cores = -1;    // cores the trainer process used
};

// Workers busier than this were the bottleneck.
inline constexpr double kSaturatedBusyFraction = 0.90;
// Workers less busy than this had capacity to spare (strict round-robin reading keeps even a
// starved pipeline's workers from being busy all the time, so "saturated" starts well below 1).
inline constexpr double kSpareBusyFraction = 0.75;

// Steps with a spread above this are data-bound: fed TPU steps repeat to within a percent.
inline constexpr double kDataBoundSpread = 0.10;
// A later half slower than the earlier by this factor shows a prefetch buffer draining.
inline constexpr double kDrainSlowdown = 1.25;
// Fewer steady steps than this make a trial inconclusive.
inline constexpr int kMinSteadySamples = 4;

// True when the trial shows the chips waiting for data.
bool IsDataBound(const Trial& trial);
// Data-bound, or workers busy most of the time: no capacity to spare was shown.
bool IsSaturated(const Trial& trial);

// Per-worker throughput from a trial: exact when the workers' busy share was measured
// (throughput / busy workers), else throughput per worker (exact only when data-bound).
// `busy_margin` > 0 (a value kept for a whole run) adds that much to the measured share: it
// is read from cpu ticks a few points off, an absolute error that is a large relative one
// when many workers idle; a share near 0 then still bounds the rate (workers idle 95% of the
// time or more) instead of being ignored.
double RateOf(const Trial& trial, double busy_margin = 0);

// Summarises per-step seconds (step 1 first). `warmup_steps` are dropped first (compilation
// and the asynchronous-dispatch artefact after it). Errors: fewer than 2*kMinSteadySamples
// steps after warm-up, or a negative / non-finite step time.
Result<Trial> SummarizeSteps(const std::vector<double>& step_seconds,
                             double tokens_per_step_per_host, int warmup_steps = 2);

}  // namespace graintune
