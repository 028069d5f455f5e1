#include "cli/trial_table.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "contract/trainer_compile.h"
#include "tuner/figures.h"
#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"

namespace graintune::cli {

namespace {

bool Measured(const Trial& t) { return !t.oom_killed && t.samples > 0 && t.step_seconds_mean > 0; }

std::string Verdict(const Trial& t, const std::vector<Trial>& trials, double noise) {
  if (t.oom_killed) return "OOM-killed";
  if (!Measured(t)) return "no steady steps";
  const Trial* fastest = nullptr;
  for (const Trial& o : trials)
    if (Measured(o) && (!fastest || o.step_seconds_mean < fastest->step_seconds_mean)) fastest = &o;
  const double slower = t.step_seconds_mean / fastest->step_seconds_mean - 1;
  if (slower > noise)
    return (slower < 0.1 ? Fixed(slower * 100, 1) : std::to_string(std::lround(slower * 100))) +
           "% slower than attempt " + std::to_string(fastest->attempt);
  // At top speed: the best is the one with the fewest workers among those (first on a tie).
  const Trial* best = nullptr;
  for (const Trial& o : trials)
    if (Measured(o) && o.step_seconds_mean / fastest->step_seconds_mean - 1 <= noise &&
        (!best || o.workers < best->workers))
      best = &o;
  if (best == &t) return "best so far";
  return "as fast as attempt " + std::to_string(best->attempt) + ", more workers";
}

}  // namespace

std::vector<TrialRow> TrialRows(const std::vector<Trial>& trials, double noise_tolerance) {
  std::vector<TrialRow> rows;
  for (const Trial& t : trials) {
    TrialRow r{.attempt = t.attempt, .workers = t.workers};
    if (Measured(t)) {
      r.step_seconds = t.step_seconds_mean;
      if (t.tflops_per_device > 0) r.tflops_per_device = t.tflops_per_device;
      r.data_bound = IsDataBound(t);
    }
    r.verdict = Verdict(t, trials, noise_tolerance);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string TrialTable(const std::vector<TrialRow>& rows) {
  constexpr size_t kColumns = 6;
  std::vector<std::array<std::string, kColumns>> cells = {
      {"ATTEMPT", "WORKERS", "STEP", "TFLOP/S", "DATA-BOUND", "VERDICT"}};
  for (const TrialRow& r : rows)
    cells.push_back({std::to_string(r.attempt), std::to_string(r.workers),
                     r.step_seconds ? Fixed(*r.step_seconds, 3) + "s" : "-",
                     r.tflops_per_device ? Fixed(*r.tflops_per_device, 1) : "-",
                     r.data_bound ? (*r.data_bound ? "yes" : "no") : "-", r.verdict});
  std::array<size_t, kColumns> width{};
  for (const auto& row : cells)
    for (size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < kColumns; ++c) {
      line += row[c];
      if (c + 1 < kColumns) line += std::string(width[c] - row[c].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json TrialRowJson(const TrialRow& r) {
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"attempt", r.attempt},
          {"workers", r.workers},
          {"stepSeconds", optional(r.step_seconds)},
          {"tflopsPerDevice", optional(r.tflops_per_device)},
          {"dataBound", optional(r.data_bound)},
          {"verdict", r.verdict}};
}

namespace {

// What `graintune status` shows of one GrainTuning, read once from its typed spec, status and
// history (workload/grain_tuning_status.h); the JSON and the text are both made from it.
struct TuningStatusView {
  std::string ns, name, tuning_key, demand_key, phase;
  std::vector<std::string> learned_from;
  std::optional<int> recommended_workers;
  int recommendation_attempt = 0;
  std::string recommendation_reason;
  std::optional<int> next_run_workers;
  std::string next_run_reason;
  std::vector<workload::RunStatus> runs;
  std::optional<workload::LapStatus> lap;
  std::optional<workload::StartCheckStatus> start_check;
  // The conditions a person acts on, when True: a run that keeps its value, one that ended early.
  std::optional<std::string> value_pinned, ended_early;
  std::vector<TrialRow> trials;
};

TuningStatusView ViewOf(const nlohmann::json& gt) {
  const nlohmann::json meta = gt.value("metadata", nlohmann::json::object());
  const workload::GrainTuningStatus status = workload::StatusOf(gt);
  const workload::GrainTuningSpec spec = workload::SpecOf(gt);
  const TuningHistory history = workload::HistoryFromGrainTuning(gt);
  TuningStatusView v{.ns = meta.value("namespace", ""),
                     .name = meta.value("name", ""),
                     .tuning_key = spec.tuning_key,
                     // What it learned from others: the key its demand is looked up by.
                     .demand_key = spec.demand_key.value_or(""),
                     .phase = status.phase.value_or(""),
                     .learned_from = spec.learned_from,
                     .recommended_workers = history.recommended_workers,
                     .recommendation_attempt = history.recommendation_attempt,
                     .recommendation_reason = history.recommendation_reason,
                     .next_run_workers = history.next_run_workers,
                     .next_run_reason = history.next_run_reason,
                     .lap = status.lap,
                     .start_check = status.start_check,
                     .trials = TrialRows(history.trials)};
  if (v.demand_key.empty() && status.learned) v.demand_key = status.learned->demand_key.value_or("");
  for (const auto& [dir, run] : history.runs) v.runs.push_back(workload::RunStatusOf(dir, run));
  for (const workload::ConditionStatus& c : status.conditions) {
    if (c.status != "True") continue;
    if (c.type == "ValuePinned") v.value_pinned = c.message;
    if (c.type == "EndedEarly") v.ended_early = c.message;
  }
  return v;
}

std::string LapText(const workload::LapStatus& lap) {
  std::string out = "  lap:  attempt " + std::to_string(lap.attempt) + ", " + std::to_string(lap.hosts) +
                    " hosts at " + std::to_string(lap.admission_workers) + " workers: " +
                    (lap.workers ? "the run keeps " + std::to_string(*lap.workers) + " workers" : lap.answer);
  if (lap.wall_seconds) out += " (" + std::to_string(static_cast<long>(*lap.wall_seconds)) + " s)";
  out += "\n";
  if (lap.started_hosts > 0) {
    std::string values;
    for (int v : lap.started_values) values += (values.empty() ? "" : ", ") + std::to_string(v);
    out += "  lap:  " + std::to_string(lap.started_hosts) + " hosts started their trainers with " +
           (lap.started_values.size() > 1 ? "MIXED values: " + values + " (their checkpoints cannot be resumed with one)"
                                          : values + " workers") + "\n";
  }
  if (lap.trainer_compile) {
    const std::string& compile = *lap.trainer_compile;
    out += "  lap:  the trainer's train step: " +
           (compile == contract::TrainerCompileStatusName(contract::TrainerCompile::kCacheHit)
                ? std::string("from the JAX cache the lap filled")
            : compile == contract::TrainerCompileStatusName(contract::TrainerCompile::kCompiled)
                ? std::string("compiled again (its program differs from the lap's)")
                : "unknown (" + lap.trainer_compile_why.value_or("") + ")") +
           "\n";
  }
  return out;
}

std::string StartCheckText(const workload::StartCheckStatus& check) {
  auto count = [](const std::optional<int>& n) { return n ? std::to_string(*n) : std::string("?"); };
  std::string out = "  start check: attempt " + std::to_string(check.attempt) + " (pod " + check.pod + "): ";
  if (!check.checked) return out + "could not read the start, which ran as written (" + check.why + ")\n";
  return out + "graintune wrote " + count(check.admission_workers) + ", MaxText read " +
         count(check.written_workers) + ", the trainer runs with " + count(check.started_workers) +
         (check.saved_workers ? ", its checkpoint (step " + std::to_string(check.checkpoint_step.value_or(0)) +
                                    ") saved " + std::to_string(*check.saved_workers)
                              : std::string()) +
         "\n    why: " + check.why + "\n";
}

}  // namespace

nlohmann::json TuningStatusJson(const nlohmann::json& gt) {
  const TuningStatusView v = ViewOf(gt);
  nlohmann::json rows = nlohmann::json::array();
  for (const TrialRow& r : v.trials) rows.push_back(TrialRowJson(r));
  nlohmann::json recommendation = nullptr;
  if (v.recommended_workers)
    recommendation = {{"workers", *v.recommended_workers},
                      {"attempt", v.recommendation_attempt},
                      {"reason", v.recommendation_reason}};
  nlohmann::json next_run = nullptr;
  if (v.next_run_workers) next_run = {{"workers", *v.next_run_workers}, {"reason", v.next_run_reason}};
  nlohmann::json runs = nlohmann::json::array();
  for (const workload::RunStatus& run : v.runs) runs.push_back(workload::ToJson(run));
  nlohmann::json conditions = nlohmann::json::object();
  if (v.value_pinned) conditions["ValuePinned"] = *v.value_pinned;
  if (v.ended_early) conditions["EndedEarly"] = *v.ended_early;
  return {{"namespace", v.ns},
          {"name", v.name},
          {"tuningKey", v.tuning_key},
          {"demandKey", v.demand_key},
          {"learnedFrom", v.learned_from},
          {"phase", v.phase},
          {"recommendation", recommendation},
          {"nextRun", next_run},
          {"runs", runs},
          {"lap", v.lap ? workload::ToJson(*v.lap) : nlohmann::json()},
          {"startCheck", v.start_check ? workload::ToJson(*v.start_check) : nlohmann::json()},
          {"conditions", conditions},
          {"trials", rows}};
}

std::string TuningStatusText(const nlohmann::json& gt) {
  const TuningStatusView v = ViewOf(gt);
  std::string out = "GrainTuning " + v.ns + "/" + v.name;
  if (v.tuning_key != v.name) out += " (key " + v.tuning_key + ")";
  if (!v.phase.empty()) out += ": " + v.phase;
  out += "\n";
  if (v.recommended_workers) {
    out += "  next: attempt " + std::to_string(v.recommendation_attempt) + " gets " +
           std::to_string(*v.recommended_workers) + " workers\n";
    if (!v.recommendation_reason.empty()) out += "  why:  " + v.recommendation_reason + "\n";
  }
  if (v.next_run_workers) out += "  next run: " + std::to_string(*v.next_run_workers) + " workers\n";
  std::string from;
  for (const std::string& g : v.learned_from) from += (from.empty() ? "" : ", ") + g;
  if (!v.demand_key.empty() || !from.empty()) {
    out += "  demand key: " + v.demand_key + "\n";
    out += "  learned from: " + (from.empty() ? std::string("nothing learned elsewhere") : "GrainTuning " + from) + "\n";
  }
  for (const workload::RunStatus& run : v.runs)
    out += "  run:  " + run.checkpoint_dir + " keeps " + std::to_string(run.workers) + " workers (from attempt " +
           std::to_string(run.first_attempt.value_or(0)) + ")\n";
  if (v.lap) out += LapText(*v.lap);
  if (v.start_check) out += StartCheckText(*v.start_check);
  if (v.value_pinned) out += "  pinned: " + *v.value_pinned + "\n";
  if (v.ended_early) out += "  ENDED EARLY: " + *v.ended_early + "\n";
  if (v.trials.empty()) return out + "  no trials yet\n";
  return out + "\n" + TrialTable(v.trials);
}

}  // namespace graintune::cli
