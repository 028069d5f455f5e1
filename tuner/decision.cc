#include "tuner/decision.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "tuner/counts.h"
#include "tuner/figures.h"

namespace graintune {
namespace {

// Workers the cores left to them can run. Rounded to the nearest whole worker, not down: a
// worker with half a core or more still adds throughput (measured with real Grain on a 2-core
// host, bench/real_grain: 2 workers beside a trainer delivered 1.6x one worker), while one
// with less mostly adds contention.
int CpuBudget(double available_cores) { return CountOf(std::floor(std::max(0.0, available_cores) + 0.5)); }

int CeilInt(double x) { return CountOf(std::ceil(x - 1e-9)); }

double Safety(const Policy& policy) {
  return policy.objective == Objective::kFewestWorkers ? 1.05 : policy.safety_factor;
}

// Headroom kept when trimming a fed count down to the measured need: workers whose batches vary
// stall the trainer well before they are busy all the time (in the benchmark, trims to 1.25x
// the busy workers starved 23 times in 88, to 1.4x twice in 80), so a trim aims at workers busy
// about 70% of the time. The fewest-workers objective keeps its own thin margin.
constexpr double kTrimHeadroom = 1.4;

double TrimSafety(const TuningInputs& in) {
  return in.policy.objective == Objective::kFewestWorkers
             ? Safety(in.policy)
             : std::max(in.policy.safety_factor, in.from_lap ? kLapTrimHeadroom : kTrimHeadroom);
}

double UsableMemory(const TuningInputs& in) {
  const double reserved = in.policy.reserved_memory_bytes.value_or(
      DefaultReservedMemory(in.host.memory_bytes));
  return std::max(0.0, in.host.memory_bytes - reserved) * (1.0 - in.policy.memory_headroom);
}

// Clamps `want` into [policy min, ceiling], the ceiling winning over the minimum (memory
// safety before preference). Appends what bound it to `reason`.
int Bound(int want, int ceiling, const TuningInputs& in, std::string& reason) {
  int workers = std::max(want, in.policy.min_workers);
  if (workers != want) reason += ", policy min " + std::to_string(in.policy.min_workers);
  if (workers > ceiling) workers = ceiling;
  return std::max(1, workers);
}

std::string BudgetText(const Budgets& b, const TuningInputs& in) {
  // The host first, with where its figures came from (a Node, or the machine-type table).
  std::string text = "host " + Fixed(in.host.cpu_cores, 1) + " cpu, " + Bytes(in.host.memory_bytes) +
                     (in.host.source.empty() ? "" : " (" + in.host.source + ")") + ": ";
  text += "cpu budget " + std::to_string(b.cpu) + ", memory budget " +
                     std::to_string(b.memory) + " (" + Bytes(b.per_worker_memory_bytes) +
                     "/worker)";
  if (in.policy.max_workers < std::min(b.cpu, b.memory))
    text += ", policy max " + std::to_string(in.policy.max_workers);
  return text;
}

void FillBuffer(const TuningInputs& in, Decision& d) {
  const double with_two = in.profile.worker_memory_bytes + 2 * in.demand.element_bytes;
  d.per_worker_buffer = d.workers * with_two <= UsableMemory(in) ? 2 : 1;
}

Decision FirstPick(const TuningInputs& in, const Budgets& budgets) {
  Decision d;
  d.budgets = budgets;
  const bool whole_run = in.lifetime == ValueLifetime::kRun;
  std::string rate_text;
  if (whole_run && !in.profile.rate_known) {
    // Nothing says how fast this dataset's workers are: size for the slow end of its kind.
    const RateRange plausible = PlausibleRates(in.profile.kind);
    d.per_worker_tokens_per_second = plausible.low;
    rate_text = Compact(plausible.low) + " tok/s per worker (the low end of " +
                ToString(in.profile.kind) + " datasets, " + Compact(plausible.low) + ".." +
                Compact(plausible.high) + ": this run keeps its value)";
  } else {
    d.per_worker_tokens_per_second = in.profile.tokens_per_second_per_worker;
    rate_text = Compact(d.per_worker_tokens_per_second) + " tok/s per worker (" + in.profile.source + ")";
  }
  double demand = in.demand.tokens_per_second_per_host;
  std::string demand_text = Compact(demand) + " tok/s/host (" + in.demand.basis + ")";
  if (whole_run && in.demand.step_estimated) {
    // An estimated step, for a run that keeps its value: the chips at the high end of the
    // utilisation MaxText reaches, not the typical one.
    demand *= kHighEndMfu / kAssumedMfu;
    demand_text = Compact(demand) + " tok/s/host (" + in.demand.basis + ", at " +
                  Fixed(100 * kHighEndMfu, 0) + "% MFU: this run keeps its value)";
  }
  d.needed_workers = demand / d.per_worker_tokens_per_second;
  const double safety = whole_run && in.profile.rate_known && in.policy.objective == Objective::kThroughput
                            ? std::max(Safety(in.policy), kRunSafety)
                            : Safety(in.policy);
  const int want = CeilInt(d.needed_workers * safety);
  d.reason = "demand " + demand_text + ", " + rate_text + ", x" + Fixed(safety, 2) +
             " safety -> " + std::to_string(want) + "; " + BudgetText(budgets, in);
  d.workers = Bound(want, budgets.ceiling, in, d.reason);
  d.reason += " -> " + std::to_string(d.workers);
  return d;
}

// Replaces the default-based budgets with what the exporter measured on the latest trial that
// has the figures: the trainer's real cpu and memory, and the workers' real memory (each with
// 10% margin). Explicit policy reservations are kept. A figure no pod on this host can have
// shown (memory past the host's, more cores than it has) is not a measurement and is skipped:
// the figures come from a pod its owner controls. Returns a note for the reason, or "".
std::string ApplyMeasurements(const TuningInputs& in, const std::vector<Trial>& trials,
                              Budgets& b) {
  std::string note;
  for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
    if (it->oom_killed || it->worker_memory_bytes <= 0 || it->trainer_memory_bytes <= 0 ||
        it->worker_memory_bytes + it->trainer_memory_bytes > in.host.memory_bytes)
      continue;
    const double trainer = in.policy.reserved_memory_bytes.value_or(1.1 * it->trainer_memory_bytes);
    const double per_worker = 1.1 * it->worker_memory_bytes;
    const double usable = in.host.memory_bytes * (1.0 - in.policy.memory_headroom) - trainer;
    b.memory = CountOf(std::floor(std::max(0.0, usable) / per_worker));
    b.per_worker_memory_bytes = per_worker;
    note = "measured " + Bytes(it->worker_memory_bytes) + "/worker, trainer " +
           Bytes(it->trainer_memory_bytes);
    break;
  }
  if (!in.policy.reserved_cpu_cores) {
    for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
      if (it->oom_killed || it->trainer_cpu_cores < 0 || it->trainer_cpu_cores > in.host.cpu_cores) continue;
      const double reserved = 1.1 * it->trainer_cpu_cores + 0.5;
      b.cpu = CpuBudget(in.host.cpu_cores - reserved);
      note += std::string(note.empty() ? "" : ", ") + "trainer uses " +
              Fixed(it->trainer_cpu_cores, 1) + " cores";
      break;
    }
  }
  b.ceiling = std::max(1, std::min({b.cpu, b.memory, in.policy.max_workers}));
  return note;
}

}  // namespace

std::string ToString(Phase phase) {
  return phase == Phase::kConverged ? "Converged" : "Exploring";
}

Budgets ComputeBudgets(const TuningInputs& in) {
  Budgets b;
  const double reserved_cpu =
      in.policy.reserved_cpu_cores.value_or(DefaultReservedCpu(in.host.cpu_cores));
  b.cpu = CpuBudget(in.host.cpu_cores - reserved_cpu);
  b.per_worker_memory_bytes = in.profile.worker_memory_bytes + in.demand.element_bytes;
  b.memory = b.per_worker_memory_bytes > 0
                 ? CountOf(std::floor(UsableMemory(in) / b.per_worker_memory_bytes))
                 : b.cpu;
  b.ceiling = std::max(1, std::min({b.cpu, b.memory, in.policy.max_workers}));
  return b;
}

namespace {

// Caps budgets.ceiling clearly below every OOMKilled attempt (15%, at least one worker);
// returns the note of the cap that bound, "" when none did.
std::string CapBelowOomKills(const std::vector<Trial>& trials, Budgets& budgets) {
  std::string oom_note;
  for (const Trial& t : trials) {
    if (!t.oom_killed) continue;
    const int cap = std::max(1, t.workers - std::max(1, CeilInt(0.15 * t.workers)));
    if (cap < budgets.ceiling) {
      budgets.ceiling = cap;
      oom_note = "OOMKilled with " + std::to_string(t.workers) + " workers caps at " +
                 std::to_string(cap);
    }
  }
  return oom_note;
}

// The trials that measured a steady throughput.
std::vector<Trial> UsableTrials(const std::vector<Trial>& trials) {
  std::vector<Trial> usable;
  for (const Trial& t : trials) {
    if (!t.oom_killed && t.samples >= kMinSteadySamples && t.workers > 0 &&
        t.tokens_per_second_per_host > 0)
      usable.push_back(t);
  }
  return usable;
}

bool Tried(const std::vector<Trial>& usable, int workers) {
  return std::any_of(usable.begin(), usable.end(), [&](const Trial& t) { return t.workers == workers; });
}

// What the usable trials show together.
struct Evidence {
  double busy_margin = 0;  // taken off each busy share read
  double rate = 0;         // tokens/s per worker
  bool rate_measured = false;  // by a saturated trial, else a lower bound
  double best = 0;             // the best tokens/s per host seen
  const Trial* fewest_at_best = nullptr;  // the value to keep when the chips were fed
  const Trial* top = nullptr;             // most workers tried
  bool fed_at_estimate = false, spare_seen = false, plateau = false;

  bool Fed() const { return plateau || spare_seen || fed_at_estimate; }
  std::string RateText() const {
    return Compact(rate) + " tok/s per worker " + (rate_measured ? "measured" : "(lower bound)");
  }
};

// Per-worker throughput: a saturated trial (data-bound, or workers busy most of the time)
// measures it; otherwise the trials only bound it from below.
void ReadRate(const std::vector<Trial>& usable, Evidence& e) {
  for (const Trial& t : usable) {
    if (IsSaturated(t) && (!e.rate_measured || RateOf(t, e.busy_margin) > e.rate)) {
      e.rate = RateOf(t, e.busy_margin);
      e.rate_measured = true;
    }
  }
  if (!e.rate_measured)
    for (const Trial& t : usable) e.rate = std::max(e.rate, RateOf(t, e.busy_margin));
}

// The value to keep: the fewest workers within noise of the best, among the trials that showed
// spare capacity when there are any (a saturated trial's throughput can look close to the best
// only by measurement noise). When every trial that looked fed ran clearly below the best (its
// busy share read low): the fewest workers at the best, saturated or not.
const Trial* FewestAtBest(const std::vector<Trial>& usable, double best, double noise) {
  bool any_fed = false;
  for (const Trial& t : usable) any_fed = any_fed || !IsSaturated(t);
  const Trial* fewest = nullptr;
  for (const Trial& t : usable)
    if (t.tokens_per_second_per_host >= best * (1 - noise) && (!any_fed || !IsSaturated(t)) &&
        (!fewest || t.workers < fewest->workers))
      fewest = &t;
  if (!fewest)
    for (const Trial& t : usable)
      if (t.tokens_per_second_per_host >= best * (1 - noise) && (!fewest || t.workers < fewest->workers))
        fewest = &t;
  return fewest;
}

Evidence ReadEvidence(const TuningInputs& in, const std::vector<Trial>& trials,
                      const std::vector<Trial>& usable) {
  Evidence e;
  // Each trial with a busy share is an independent reading: the margin shrinks as they add up.
  int busy_readings = 0;
  for (const Trial& t : trials) busy_readings += !t.oom_killed && t.worker_busy_fraction > 0;
  const double margin = in.from_lap ? kLapBusyShareMargin : kRunBusyShareMargin;
  e.busy_margin = in.lifetime == ValueLifetime::kRun && busy_readings > 0
                      ? margin / std::sqrt(busy_readings) : 0;
  const double noise = in.policy.noise_tolerance;
  const double estimate = in.demand.tokens_per_second_per_host;
  ReadRate(usable, e);
  for (const Trial& t : usable) e.best = std::max(e.best, t.tokens_per_second_per_host);
  e.fewest_at_best = FewestAtBest(usable, e.best, noise);
  // The compute step measured while a prefetch buffer lasted (the fastest such pace seen).
  double buffered = 0;
  for (const Trial& t : usable)
    if (t.buffered_step_seconds > 0.05 && (buffered == 0 || t.buffered_step_seconds < buffered))
      buffered = t.buffered_step_seconds;
  for (const Trial& t : usable) {
    if (!e.top || t.workers > e.top->workers) e.top = &t;
    // Not saturated and at the estimated demand: nothing suggests more workers would help.
    e.fed_at_estimate = e.fed_at_estimate ||
                        (!IsSaturated(t) && t.tokens_per_second_per_host >= estimate * (1 - noise));
    // Not saturated and steadily at the buffered pace: the chips were fed, whatever the
    // (optimistic) estimate said.
    e.fed_at_estimate = e.fed_at_estimate || (!IsSaturated(t) && buffered > 0 && t.samples > 0 &&
                                              t.step_seconds_p50 <= buffered * (1 + noise));
    // Workers measured idle a good share of the time: the pipeline had capacity to spare.
    e.spare_seen = e.spare_seen || (!IsSaturated(t) && t.worker_busy_fraction >= 0);
    for (const Trial& u : usable)
      e.plateau = e.plateau || (t.workers < u.workers &&
                                u.tokens_per_second_per_host <= t.tokens_per_second_per_host * (1 + noise));
  }
  return e;
}

// A fed decision's trim to what the measured demand and a measured per-worker rate call for,
// worth an attempt only when it saves a tenth of the workers (at least one). The most workers
// measured starved (saturated below the best) bound it from below, so a trim that starved is
// undone by the next decision.
void TrimToMeasuredDemand(const TuningInputs& in, const std::vector<Trial>& usable,
                          const Evidence& e, Decision& d) {
  const double noise = in.policy.noise_tolerance;
  const Trial* starved = nullptr;
  for (const Trial& t : usable)
    if (IsSaturated(t) && t.tokens_per_second_per_host < e.best * (1 - noise) &&
        (!starved || t.workers > starved->workers))
      starved = &t;
  if (!e.rate_measured && !e.spare_seen) return;
  // The per-worker rate nearest the trimmed count: workers contend, so the rate of the most
  // workers measured starved (a trim that starved, say) beats one measured with fewer.
  const double trim_rate = starved ? std::min(e.rate, RateOf(*starved, e.busy_margin)) : e.rate;
  const double trim_safety = TrimSafety(in);
  int fewer = CeilInt(e.best / trim_rate * trim_safety);
  std::string floor_text;
  if (starved && fewer <= starved->workers) {
    fewer = starved->workers + 1;
    floor_text = ", above the " + std::to_string(starved->workers) + " that starved";
  }
  fewer = std::max(fewer, in.policy.min_workers);
  if (d.workers - fewer >= std::max(1, CeilInt(0.1 * d.workers))) {
    d.reason += "; measured demand " + Compact(e.best) + " tok/s/host / " + Compact(trim_rate) +
                " x" + Fixed(trim_safety, 2) + " -> " + std::to_string(fewer) + floor_text;
    d.workers = fewer;
    if (!Tried(usable, fewer)) d.phase = Phase::kExploring;
  } else if (starved && starved->workers < d.workers) {
    d.reason += "; " + std::to_string(starved->workers) + " workers starved";
  }
}

// The chips were fed at `best`: that is the demand, measured (tokens per step over the measured
// compute step), not the FLOPs estimate. Keep the fewest workers that reached it, trimmed.
Decision KeepFed(const TuningInputs& in, const Budgets& budgets, const std::vector<Trial>& usable,
                 const Evidence& e, const std::string& oom_note) {
  Decision d;
  d.budgets = budgets;
  d.per_worker_tokens_per_second = e.rate;
  d.needed_workers = e.best / e.rate;
  d.workers = e.fewest_at_best->workers;
  d.phase = Phase::kConverged;
  d.reason = "attempt " + std::to_string(e.fewest_at_best->attempt) + " kept the chips fed at " +
             Compact(e.best) + " tok/s/host with " + std::to_string(d.workers) + " workers (" +
             (e.plateau ? "more workers gained nothing" : e.spare_seen ? "workers had time to spare"
                                                                      : "estimated demand reached") +
             "); " + e.RateText();
  TrimToMeasuredDemand(in, usable, e, d);
  // The policy's minimum holds however few workers fed the chips (the ceiling still wins).
  if (d.workers < in.policy.min_workers) {
    d.workers = in.policy.min_workers;
    d.reason += ", policy min " + std::to_string(in.policy.min_workers);
  }
  if (d.workers > budgets.ceiling) {
    d.workers = budgets.ceiling;
    d.phase = Phase::kExploring;
    d.reason += "; " + (oom_note.empty() ? "budget " + std::to_string(budgets.ceiling) : oom_note);
  }
  d.reason += " -> " + std::to_string(d.workers);
  return d;
}

// Not shown fed: jump to what the measured rate and the demand imply. When the estimate is
// already reached yet the workers stay saturated, the chips are faster than estimated.
Decision JumpToDemand(const TuningInputs& in, const Budgets& budgets, const std::vector<Trial>& usable,
                      const Evidence& e, const std::string& measured_note, const std::string& oom_note) {
  Decision d;
  d.budgets = budgets;
  d.per_worker_tokens_per_second = e.rate;
  const double estimate = in.demand.tokens_per_second_per_host;
  const double safety = Safety(in.policy);
  double demand = estimate;
  std::string demand_text = "demand " + Compact(demand) + " tok/s/host (" + in.demand.basis + ")";
  if (e.best >= estimate * (1 - in.policy.noise_tolerance)) {
    demand = 2 * e.best;
    demand_text = "still saturated at " + Compact(e.best) +
                  " tok/s/host, above the estimated demand: assume twice that";
  }
  const Trial& top = *e.top;
  d.needed_workers = demand / e.rate;
  int want = CeilInt(d.needed_workers * safety);
  want = std::max(want, top.workers + std::max(1, top.workers / 4));  // a real jump, never +1
  d.reason = "attempt " + std::to_string(top.attempt) + " with " + std::to_string(top.workers) +
             " workers reached " + Compact(top.tokens_per_second_per_host) + " tok/s/host (" +
             (IsDataBound(top) ? "data-bound" : "workers busy, not shown fed") + "): " +
             e.RateText() + "; " + demand_text + ", x" + Fixed(safety, 2) + " -> " +
             std::to_string(want) + "; " + BudgetText(budgets, in);
  if (!measured_note.empty()) d.reason += " (" + measured_note + ")";
  if (!oom_note.empty()) d.reason += "; " + oom_note;
  d.workers = Bound(want, budgets.ceiling, in, d.reason);
  if (d.workers <= top.workers || Tried(usable, d.workers)) {
    d.workers = std::min(std::max(d.workers, e.fewest_at_best->workers), budgets.ceiling);
    d.phase = Phase::kConverged;
    d.reason += " -> " + std::to_string(d.workers) + " (budget reached: cannot gain)";
  } else {
    d.reason += " -> " + std::to_string(d.workers);
  }
  return d;
}

}  // namespace

Decision Decide(const TuningInputs& in, const std::vector<Trial>& trials) {
  Budgets budgets = ComputeBudgets(in);
  const std::string measured_note = ApplyMeasurements(in, trials, budgets);
  const std::string oom_note = CapBelowOomKills(trials, budgets);
  const std::vector<Trial> usable = UsableTrials(trials);
  Decision d;
  if (usable.empty()) {
    d = FirstPick(in, budgets);
    if (!oom_note.empty()) d.reason = oom_note + "; " + d.reason;
  } else {
    const Evidence e = ReadEvidence(in, trials, usable);
    d = e.Fed() ? KeepFed(in, budgets, usable, e, oom_note)
                : JumpToDemand(in, budgets, usable, e, measured_note, oom_note);
  }
  FillBuffer(in, d);
  return d;
}

}  // namespace graintune
