// The practice lap's decision: one value for a whole run, from what a short lap of the job's own
// command measured on every host of its first attempt.
//
// A checkpointed run keeps its first grain_worker_count for its whole life, and admission sizes
// that value before anything about the run is measured (the low end of the dataset kind's
// per-worker rates, an estimated step). A lap runs the job's own command for a few steps before
// the trainer starts, off the run (checkpointing off, output elsewhere), with admission's value,
// and graintune's exporter measures it as it measures a trainer. Two kinds of lap:
//   - a training lap (MaxText's train for LapSteps steps): its steady step time is the demand
//     when the chips were fed, and the workers' busy share gives their per-worker rate. Decided
//     by Decide() with the lap as the one trial of the run (a fed lap is trimmed to the measured
//     demand over the measured rate x1.25, kLapTrimHeadroom; a starved lap measured the rate exactly);
//   - a data-only lap (MaxText's standalone data loader: one batch per step, nothing trained):
//     supply only. Its per-worker rate and worker memory become the dataset's profile, and
//     Decide() sizes the estimated demand with them (a first pick with a known rate).
// Either way the value is decided with ValueLifetime::kRun, and the measured worker memory
// replaces the kind's high-end default in the memory budget (with 10% margin).
//
// Hosts combine conservatively: the slowest host feeds the slice (a step waits for every host's
// batch), so the host whose workers deliver the least per worker sets the rate, and the highest
// worker and trainer memory any host showed sets the memory budget.
//
// No lap value (an error naming why; the caller keeps admission's value) when any host failed
// (OOM kill, crash, timeout), sent no figures or figures no real lap can have shown, or fewer
// hosts answered than the attempt has. Untrusted figures are bounded: at most kMaxLapHosts
// hosts, each figure checked for range. Pure: plain values in and out, no clock or I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tuner/decision.h"

namespace graintune {

enum class LapKind { kTraining, kDataOnly };
std::string ToString(LapKind kind);

// The fewest and most steps a lap runs (LapSteps).
inline constexpr int kMinLapSteps = 20;
inline constexpr int kMaxLapSteps = 5000;
// Hosts one attempt's laps may report: a v5p-12288 slice has 3,072 hosts.
inline constexpr int kMaxLapHosts = 4096;

// What one host's lap measured (graintune's exporter, as for a trainer).
struct LapFigures {
  LapKind kind = LapKind::kTraining;
  bool failed = false;              // OOM-killed, crashed or timed out: no figures
  int workers = 0;                  // the grain_worker_count the lap ran with
  // Mean seconds of the lap's steady steps (SummarizeSteps' later half): a training step, or
  // for a data-only lap one batch of the loader loop.
  double step_seconds = 0;
  int steady_steps = 0;             // steps behind step_seconds
  double step_spread = 0;           // (p90 - p10) / p50 of the steady steps
  bool draining = false;            // the later half ran clearly slower than the earlier
  // Share of the time the workers were busy over the steady steps, 0..1 (< 0 unknown), counting
  // the batches they refill while the lap ends, as /proc cpu time does.
  double worker_busy_fraction = -1;
  double worker_memory_bytes = 0;   // peak resident memory of one worker; 0 unknown
  double trainer_memory_bytes = 0;  // a training lap's trainer peak; 0 unknown
  double trainer_cpu_cores = -1;    // cores the trainer used; < 0 unknown
};

// Steps a lap with admission's value runs: the exporter judges the later half of the lap (as
// SummarizeSteps does), which must start after every worker filled its buffer (per_worker_buffer
// + 1 batches at the slowest per-worker rate the dataset plausibly has: until then every worker
// reads busy, however many there are), twice that time at the shortest step the estimate allows
// (the high-end MFU), within [kMinLapSteps, kMaxLapSteps].
int LapSteps(const TuningInputs& inputs, const Decision& admission);

// How long a lap of `steps` steps may run before it is stopped (the trainer then starts with
// admission's value): a first compile's allowance (kLapCompileSeconds) plus the steps at the
// estimated step (at the assumed MFU), with 50% to spare, within [60, 3600] s.
inline constexpr double kLapCompileSeconds = 300;
int LapTimeoutSeconds(const TuningInputs& inputs, int steps);
// What a lap is expected to cost the slice in wall time: a compile plus the steps at the
// estimated step, for `explain`.
double LapExpectedSeconds(const TuningInputs& inputs, int steps);

// What a lap costs its run: its steps as a share of the run's (the compile is not counted: the
// trainer finds the lap's program in the JAX compilation cache the lap filled), its expected wall
// time (LapExpectedSeconds), and that time on every chip of the slice.
struct LapCost {
  int steps = 0;
  std::optional<long> run_steps;      // the trainer's configured steps, when known
  double seconds = 0;
  std::optional<double> run_share;    // steps / run_steps
  std::optional<double> chip_hours;   // seconds x the slice's chips / 3600, when its hosts are known
  std::optional<long> chips;
  // "20.6% of the run's 2000 steps, about 1153 s, 10.2 chip-hours of the slice's 32 chips"
  std::string Describe() const;
};
LapCost LapCostOf(const TuningInputs& inputs, int steps, std::optional<long> run_steps,
                  std::optional<long> hosts);
// Why the policy refuses a lap of `cost` (over lap.maxRunShare, or a run of unknown length: its
// share cannot be bounded); nullopt when it allows it.
std::optional<std::string> LapRefusal(const LapCost& cost, const LapPolicy& policy);

// A lap summarised as a Trial is (SummarizeSteps plus the exporter's process figures).
LapFigures LapFiguresOf(const Trial& steady, LapKind kind);

// The run's one value from the laps of every host of the attempt (`hosts`: how many the attempt
// has). `inputs` are admission's (host, estimated demand, dataset defaults or annotations,
// policy); the decision is for a whole run. Errors: see the header comment.
Result<Decision> DecideFromLaps(const TuningInputs& inputs, const std::vector<LapFigures>& laps,
                                int hosts);

}  // namespace graintune
