// Decide(): the one entry point of graintune's decision logic.
//
// Inputs are plain values: the host, the workload's demand, the dataset profile, the policy
// and the trials of earlier attempts (any order). The output is a Decision whose `reason`
// names every figure that shaped it. No clock, randomness, I/O or logging inside: the same
// inputs always give the same Decision, so it can run in the webhook's hot path, the
// operator's reconcile, the CLI and the benchmark alike.
//
// First pick (no usable trial): need = demand / per-worker throughput, times the policy's
// safety factor, bounded by the cpu budget (host cpu less the trainer's reserve), the memory
// budget (host memory less the trainer's reserve and headroom, over per-worker memory) and the
// policy's min/max.
//
// A value kept for a whole run (ValueLifetime::kRun: a checkpointed run restores Grain's
// iterator with the count it saved, so the first pick is what it trains with for days) is
// sized differently where the per-worker rate is not known (no annotation, no learned
// profile): for the low end of the rates the dataset kind plausibly has (PlausibleRates:
// 0.3x..3.6x of the kind's default, so raw text 600..7,200 tok/s per worker), not for the
// typical one. A starved run stays starved for its whole life; an idle worker on a dedicated
// TPU host costs only host cpu and memory, and the cpu and memory budgets (with the kind's
// high-end per-worker memory) still bound the count, so the pick never runs the host out of
// memory. With a known rate the kRun pick keeps at least kRunSafety of headroom. A value for
// the next attempt (ValueLifetime::kAttempt: an elastic iterator, no checkpointing, a plain
// restart) keeps the typical rate: the loop corrects it at the next restart.
//
// Across restarts: an OOMKilled attempt caps the count below it. Data-bound trials give a
// per-worker throughput; the next value jumps straight to what that throughput and the demand
// imply. Gains below the noise tolerance are never chased.
//
// Once a trial kept the chips fed (not saturated and at the estimated demand or at the pace of
// its buffered first steps, or workers measured with time to spare, or more workers gaining
// nothing), its throughput is the demand, measured: tokens per step over the measured compute
// step, in place of the FLOPs estimate. The value is then the fewest workers that reached the
// best throughput (within the noise tolerance), trimmed to what the measured demand and a
// measured per-worker rate (from a saturated trial, or from the workers' busy share) call for:
// ceil(measured demand / rate x 1.4: workers busy ~70% of the time; the fewest-workers objective
// keeps 1.05), never at or below a count measured starved (saturated
// below the best), and only when it saves at least a tenth of the workers. An untried trim is
// Exploring; if it starves, the next decision goes back above it, so a trim costs at most one
// attempt at lower throughput. Otherwise the phase is Converged.
#pragma once

#include <string>
#include <vector>

#include "tuner/dataset_profile.h"
#include "tuner/demand.h"
#include "tuner/host_shape.h"
#include "tuner/policy.h"
#include "tuner/trial.h"

namespace graintune {

enum class Phase { kExploring, kConverged };
std::string ToString(Phase phase);

// How long the decided value lives: until the next attempt, or for the whole run.
enum class ValueLifetime { kAttempt, kRun };

// The least over-provisioning of a value kept for a whole run, where the per-worker rate is
// known: a user's estimate is off by 10% or so, and workers whose batches vary stall the
// trainer before they are all busy.
inline constexpr double kRunSafety = 1.4;
// For a value kept for a whole run, the workers' measured busy share counts this much higher
// when it sets the per-worker rate (a trim), divided by the square root of the trials that read
// it: the share comes from cpu ticks a few points off (the benchmark models +-0.03), an absolute
// error that is a large relative one when many workers idle, and a trim that starves lasts the
// whole next run instead of one attempt.
inline constexpr double kRunBusyShareMargin = 0.04;
// A practice lap's trim (practice_lap.h). The lap is one dedicated measurement whose busy share
// counts the batches its workers refill ahead of the trainer while it ends, as /proc cpu time
// does; kTrimHeadroom and kRunBusyShareMargin were fitted on trials whose busy share left those
// batches out and read the workers idler than they were. On the lap's reading a trim to 1.25x
// the busy workers (or the policy's safetyFactor, if higher) with a 0.015 margin starves no more
// scenarios in the benchmark than 1.4x and 0.04 did (docs/benchmarks.md, the practice lap).
inline constexpr double kLapTrimHeadroom = 1.25;
inline constexpr double kLapBusyShareMargin = 0.015;

struct TuningInputs {
  HostShape host;
  Demand demand;
  DatasetProfile profile;
  Policy policy;
  ValueLifetime lifetime = ValueLifetime::kAttempt;
  // Where the learned figures among these inputs were measured ("team-a/llama": the namespace and
  // name of a GrainTuning), for people; empty when the inputs are the workload's own.
  std::vector<std::string> learned_from;
  // The trials are a practice lap's (kLapTrimHeadroom, kLapBusyShareMargin).
  bool from_lap = false;
};

// The limits a host and policy put on the worker count.
struct Budgets {
  int cpu = 0;       // workers the cpu left to them can run at full speed
  int memory = 0;    // workers that fit in the memory left to them
  int ceiling = 0;   // min(cpu, memory, policy max), at least 1
  double per_worker_memory_bytes = 0;
};

struct Decision {
  int workers = 1;
  int per_worker_buffer = 1;     // Grain per_worker_buffer_size that fits the memory budget
  Phase phase = Phase::kExploring;
  double needed_workers = 0;     // the unrounded need the decision was built on
  double per_worker_tokens_per_second = 0;  // the figure used (default, annotated or measured)
  Budgets budgets;
  std::string reason;
};

Budgets ComputeBudgets(const TuningInputs& inputs);

Decision Decide(const TuningInputs& inputs, const std::vector<Trial>& trials);

}  // namespace graintune
