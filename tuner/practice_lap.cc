#include "tuner/practice_lap.h"

#include <algorithm>
#include <cmath>

#include "tuner/attempt_value.h"
#include "tuner/figures.h"

namespace graintune {
namespace {

// Margin on a measured memory peak, as Decide keeps on a trial's.
constexpr double kMeasuredMemoryMargin = 1.1;
// A step longer than a day is no lap's.
constexpr double kMaxStepSeconds = 86400;

// Worker processes start within seconds; the steps SummarizeSteps drops as warm-up.
constexpr double kLapStartupSeconds = 5;
constexpr int kLapWarmupSteps = 2;

bool FiniteIn(double x, double lo, double hi) { return std::isfinite(x) && x >= lo && x <= hi; }

// Why a host's figures cannot be a lap's measurement, or "" when they can.
std::string Unusable(const LapFigures& lap, const HostShape& host) {
  if (lap.failed) return "its lap failed (OOM kill, crash or timeout)";
  if (lap.workers < 1 || lap.workers > 4096) return "workers outside [1, 4096]";
  if (!FiniteIn(lap.step_seconds, 1e-6, kMaxStepSeconds)) return "no steady step time";
  if (lap.steady_steps < kMinSteadySamples)
    return "fewer than " + std::to_string(kMinSteadySamples) + " steady steps";
  if (!FiniteIn(lap.step_spread, 0, 1e6)) return "a step spread that is no number >= 0";
  if (!std::isfinite(lap.worker_busy_fraction) || lap.worker_busy_fraction > 1)
    return "a busy share above 1";
  const double memory_cap = host.memory_bytes > 0 ? host.memory_bytes : 1e18;
  if (!FiniteIn(lap.worker_memory_bytes, 0, memory_cap) ||
      !FiniteIn(lap.trainer_memory_bytes, 0, memory_cap) ||
      lap.worker_memory_bytes + lap.trainer_memory_bytes > memory_cap)
    return "memory beyond the host's";
  if (!std::isfinite(lap.trainer_cpu_cores) ||
      (host.cpu_cores > 0 && lap.trainer_cpu_cores > host.cpu_cores))
    return "more trainer cores than the host has";
  return "";
}

// The lap as the one trial of its run.
Trial TrialOf(const LapFigures& lap, double tokens_per_step) {
  Trial t;
  t.workers = lap.workers;
  t.samples = lap.steady_steps;
  t.step_seconds_mean = t.step_seconds_p50 = t.step_seconds_p90 = lap.step_seconds;
  t.tokens_per_second_per_host = tokens_per_step / lap.step_seconds;
  t.step_spread = lap.step_spread;
  t.draining = lap.draining;
  t.worker_busy_fraction = lap.worker_busy_fraction < 0 ? -1 : lap.worker_busy_fraction;
  t.worker_memory_bytes = lap.worker_memory_bytes;
  t.trainer_memory_bytes = lap.trainer_memory_bytes;
  t.trainer_cpu_cores = lap.trainer_cpu_cores < 0 ? -1 : lap.trainer_cpu_cores;
  return t;
}

double LapRate(const Trial& t) {
  return RateOf(t, t.worker_busy_fraction > 0 ? kLapBusyShareMargin : 0);
}

// The host whose workers delivered the least per worker, carrying the highest memory and trainer
// cpu any host showed. `laps` is not empty.
Trial SlowestHost(const std::vector<LapFigures>& laps, double tokens_per_step, size_t& index) {
  Trial slowest = TrialOf(laps[0], tokens_per_step);
  index = 0;
  double worker_memory = 0, trainer_memory = 0, trainer_cpu = -1;
  for (size_t i = 0; i < laps.size(); ++i) {
    const Trial t = TrialOf(laps[i], tokens_per_step);
    if (LapRate(t) < LapRate(slowest)) {
      slowest = t;
      index = i;
    }
    worker_memory = std::max(worker_memory, t.worker_memory_bytes);
    trainer_memory = std::max(trainer_memory, t.trainer_memory_bytes);
    trainer_cpu = std::max(trainer_cpu, t.trainer_cpu_cores);
  }
  slowest.worker_memory_bytes = worker_memory;
  slowest.trainer_memory_bytes = trainer_memory;
  slowest.trainer_cpu_cores = trainer_cpu;
  return slowest;
}

std::string LapText(LapKind kind, size_t hosts, size_t index, const Trial& t) {
  std::string text = "practice lap (" + ToString(kind) + ", " + std::to_string(hosts) +
                     (hosts == 1 ? " host" : " hosts, slowest host " + std::to_string(index)) +
                     ": " + std::to_string(t.workers) + " workers, " +
                     Fixed(t.step_seconds_mean, 2) + " s/" +
                     (kind == LapKind::kTraining ? "step" : "batch");
  if (t.worker_busy_fraction >= 0) text += ", busy " + Fixed(t.worker_busy_fraction, 2);
  if (t.worker_memory_bytes > 0) text += ", " + Bytes(t.worker_memory_bytes) + "/worker";
  return text + ")";
}

}  // namespace

std::string ToString(LapKind kind) {
  return kind == LapKind::kTraining ? "training" : "data only";
}

int LapSteps(const TuningInputs& in, const Decision& admission) {
  const double slowest_rate = in.profile.rate_known ? 0.8 * in.profile.tokens_per_second_per_worker
                                                    : PlausibleRates(in.profile.kind).low;
  const double fill_seconds = kLapStartupSeconds + (admission.per_worker_buffer + 1) *
                                                       in.demand.tokens_per_step_per_host /
                                                       std::max(1.0, slowest_rate);
  const double step = in.demand.compute_step_seconds *
                      (in.demand.step_estimated ? kAssumedMfu / kHighEndMfu : 1.0);
  const double steps = kLapWarmupSteps + 2 * fill_seconds / std::max(1e-3, step);
  return static_cast<int>(std::clamp(std::ceil(steps), double{kMinLapSteps}, double{kMaxLapSteps}));
}

double LapExpectedSeconds(const TuningInputs& in, int steps) {
  return kLapCompileSeconds / 2 + steps * in.demand.compute_step_seconds;
}

LapCost LapCostOf(const TuningInputs& in, int steps, std::optional<long> run_steps, std::optional<long> hosts) {
  LapCost cost{.steps = steps, .run_steps = run_steps, .seconds = LapExpectedSeconds(in, steps)};
  if (run_steps && *run_steps > 0) cost.run_share = static_cast<double>(steps) / static_cast<double>(*run_steps);
  if (hosts && *hosts > 0 && in.host.tpu_chips > 0) {
    cost.chips = *hosts * in.host.tpu_chips;
    cost.chip_hours = cost.seconds * static_cast<double>(*cost.chips) / 3600;
  }
  return cost;
}

std::string LapCost::Describe() const {
  std::string text = run_share ? Fixed(100 * *run_share, 1) + "% of the run's " + std::to_string(*run_steps) + " steps"
                               : std::to_string(steps) + " steps of a run of unknown length";
  text += ", about " + std::to_string(static_cast<long>(seconds)) + " s";
  if (chip_hours)
    text += ", " + Fixed(*chip_hours, 1) + " chip-hours of the slice's " + std::to_string(*chips) + " chips";
  return text;
}

std::optional<std::string> LapRefusal(const LapCost& cost, const LapPolicy& policy) {
  if (!cost.run_share)
    return "the run's steps are unknown, so what a lap of " + std::to_string(cost.steps) +
           " steps costs it cannot be bounded (lap.maxRunShare " + Fixed(100 * policy.max_run_share, 1) + "%)";
  if (*cost.run_share > policy.max_run_share)
    return "it would cost " + cost.Describe() + ", over the policy's lap.maxRunShare of " +
           Fixed(100 * policy.max_run_share, 1) + "% (" +
           std::to_string(static_cast<long>(std::floor(policy.max_run_share * static_cast<double>(*cost.run_steps)))) +
           " steps)";
  return std::nullopt;
}

int LapTimeoutSeconds(const TuningInputs& in, int steps) {
  const double seconds = kLapCompileSeconds + 1.5 * steps * in.demand.compute_step_seconds;
  return static_cast<int>(std::clamp(std::ceil(seconds), 60.0, 3600.0));
}

LapFigures LapFiguresOf(const Trial& steady, LapKind kind) {
  LapFigures lap;
  lap.kind = kind;
  lap.failed = steady.oom_killed;
  lap.workers = steady.workers;
  lap.step_seconds = steady.step_seconds_mean;
  lap.steady_steps = steady.samples;
  lap.step_spread = steady.step_spread;
  lap.draining = steady.draining;
  lap.worker_busy_fraction = steady.worker_busy_fraction;
  lap.worker_memory_bytes = steady.worker_memory_bytes;
  lap.trainer_memory_bytes = steady.trainer_memory_bytes;
  lap.trainer_cpu_cores = steady.trainer_cpu_cores;
  return lap;
}

Result<Decision> DecideFromLaps(const TuningInputs& inputs, const std::vector<LapFigures>& laps,
                                int hosts) {
  if (hosts < 1 || hosts > kMaxLapHosts)
    return Status::Error("no lap value: an attempt of " + std::to_string(hosts) + " hosts");
  if (laps.size() != static_cast<size_t>(hosts))
    return Status::Error("no lap value: " + std::to_string(laps.size()) + " of " +
                         std::to_string(hosts) + " hosts sent lap figures");
  for (size_t i = 0; i < laps.size(); ++i) {
    const std::string why = Unusable(laps[i], inputs.host);
    if (!why.empty()) return Status::Error("no lap value: host " + std::to_string(i) + ": " + why);
    if (laps[i].kind != laps[0].kind)
      return Status::Error("no lap value: hosts ran different laps");
  }
  TuningInputs in = inputs;
  in.lifetime = ValueLifetime::kRun;
  in.from_lap = true;
  size_t index = 0;
  const Trial slowest = SlowestHost(laps, in.demand.tokens_per_step_per_host, index);
  if (slowest.worker_memory_bytes > 0) {
    in.profile.worker_memory_bytes = kMeasuredMemoryMargin * slowest.worker_memory_bytes;
    in.profile.source += ", lap-measured memory";
  }
  Decision d;
  if (laps[0].kind == LapKind::kTraining) {
    d = Decide(in, {slowest});
  } else {
    // Supply only: the measured per-worker rate is the dataset's, the demand stays estimated.
    in.profile.tokens_per_second_per_worker = LapRate(slowest);
    in.profile.rate_known = true;
    in.profile.source = "practice lap";
    d = Decide(in, {});
  }
  d.reason = LapText(laps[0].kind, laps.size(), index, slowest) + ": " + d.reason;
  if (d.reason.size() > kMaxReasonBytes) d.reason.resize(kMaxReasonBytes);
  return d;
}

}  // namespace graintune
