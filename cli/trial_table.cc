#include "cli/trial_table.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "telemetry/trainer_compile.h"
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

nlohmann::json TuningStatusJson(const nlohmann::json& gt) {
  const nlohmann::json meta = gt.value("metadata", nlohmann::json::object());
  const workload::GrainTuningStatus status = workload::StatusOf(gt);
  const TuningHistory history = workload::HistoryFromGrainTuning(gt);
  nlohmann::json rows = nlohmann::json::array();
  for (const TrialRow& r : TrialRows(history.trials)) rows.push_back(TrialRowJson(r));
  nlohmann::json recommendation = nullptr;
  if (history.recommended_workers)
    recommendation = {{"workers", *history.recommended_workers},
                      {"attempt", history.recommendation_attempt},
                      {"reason", history.recommendation_reason}};
  nlohmann::json next_run = nullptr;
  if (history.next_run_workers)
    next_run = {{"workers", *history.next_run_workers}, {"reason", history.next_run_reason}};
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& [dir, run] : history.runs)
    runs.push_back(workload::ToJson(workload::RunStatusOf(dir, run)));
  // The conditions a person acts on: a run that keeps its value, one that ended early.
  nlohmann::json conditions = nlohmann::json::object();
  for (const workload::ConditionStatus& c : status.conditions)
    if (c.status == "True" && (c.type == "ValuePinned" || c.type == "EndedEarly")) conditions[c.type] = c.message;
  const workload::GrainTuningSpec spec = workload::SpecOf(gt);
  // What it learned from others: the key its demand is looked up by, the GrainTunings whose
  // figures set its first pick.
  std::string demand_key = spec.demand_key.value_or("");
  if (demand_key.empty() && status.learned) demand_key = status.learned->demand_key.value_or("");
  return {{"namespace", meta.value("namespace", "")},
          {"name", meta.value("name", "")},
          {"tuningKey", spec.tuning_key},
          {"demandKey", demand_key},
          {"learnedFrom", spec.learned_from},
          {"phase", status.phase.value_or("")},
          {"recommendation", recommendation},
          {"nextRun", next_run},
          {"runs", runs},
          {"lap", status.lap ? workload::ToJson(*status.lap) : nlohmann::json()},
          {"startCheck", status.start_check ? workload::ToJson(*status.start_check) : nlohmann::json()},
          {"conditions", conditions},
          {"trials", rows}};
}

std::string TuningStatusText(const nlohmann::json& gt) {
  const nlohmann::json s = TuningStatusJson(gt);
  std::string out = "GrainTuning " + s["namespace"].get<std::string>() + "/" + s["name"].get<std::string>();
  if (s["tuningKey"] != s["name"]) out += " (key " + s["tuningKey"].get<std::string>() + ")";
  if (!s["phase"].get<std::string>().empty()) out += ": " + s["phase"].get<std::string>();
  out += "\n";
  if (const nlohmann::json& r = s["recommendation"]; r.is_object()) {
    out += "  next: attempt " + std::to_string(r["attempt"].get<int>()) + " gets " +
           std::to_string(r["workers"].get<int>()) + " workers\n";
    if (!r["reason"].get<std::string>().empty()) out += "  why:  " + r["reason"].get<std::string>() + "\n";
  }
  if (const nlohmann::json& n = s["nextRun"]; n.is_object())
    out += "  next run: " + std::to_string(n["workers"].get<int>()) + " workers\n";
  std::string from;
  for (const nlohmann::json& g : s["learnedFrom"]) from += (from.empty() ? "" : ", ") + g.get<std::string>();
  if (!s["demandKey"].get<std::string>().empty() || !from.empty()) {
    out += "  demand key: " + s["demandKey"].get<std::string>() + "\n";
    out += "  learned from: " + (from.empty() ? std::string("nothing learned elsewhere") : "GrainTuning " + from) + "\n";
  }
  for (const nlohmann::json& run : s["runs"])
    out += "  run:  " + run["checkpointDir"].get<std::string>() + " keeps " +
           std::to_string(run["workers"].get<int>()) + " workers (from attempt " +
           std::to_string(run["firstAttempt"].get<int>()) + ")\n";
  if (const nlohmann::json& lap = s["lap"]; lap.is_object()) {
    out += "  lap:  attempt " + std::to_string(lap["attempt"].get<int>()) + ", " +
           std::to_string(lap["hosts"].get<int>()) + " hosts at " + std::to_string(lap["admissionWorkers"].get<int>()) +
           " workers: " + (lap.contains("workers") ? "the run keeps " + std::to_string(lap["workers"].get<int>()) + " workers"
                                                   : lap["answer"].get<std::string>());
    if (lap.contains("wallSeconds"))
      out += " (" + std::to_string(static_cast<long>(lap["wallSeconds"].get<double>())) + " s)";
    out += "\n";
    if (lap.contains("trainerCompile")) {
      const std::string compile = lap["trainerCompile"].get<std::string>();
      out += "  lap:  the trainer's train step: " +
             (compile == telemetry::TrainerCompileStatusName(telemetry::TrainerCompile::kCacheHit)
                  ? std::string("from the JAX cache the lap filled")
              : compile == telemetry::TrainerCompileStatusName(telemetry::TrainerCompile::kCompiled)
                  ? std::string("compiled again (its program differs from the lap's)")
                  : "unknown (" + lap.value("trainerCompileWhy", std::string()) + ")") +
             "\n";
    }
  }
  if (const std::optional<workload::StartCheckStatus> check = workload::StatusOf(gt).start_check) {
    auto count = [](const std::optional<int>& n) { return n ? std::to_string(*n) : std::string("?"); };
    out += "  start check: attempt " + std::to_string(check->attempt) + " (pod " + check->pod + "): ";
    if (!check->checked) out += "could not read the start, which ran as written (" + check->why + ")\n";
    else
      out += "graintune wrote " + count(check->admission_workers) + ", MaxText read " +
             count(check->written_workers) + ", the trainer runs with " + count(check->started_workers) +
             (check->saved_workers ? ", its checkpoint (step " + std::to_string(check->checkpoint_step.value_or(0)) +
                                         ") saved " + std::to_string(*check->saved_workers)
                                   : std::string()) +
             "\n    why: " + check->why + "\n";
  }
  if (s["conditions"].contains("ValuePinned"))
    out += "  pinned: " + s["conditions"]["ValuePinned"].get<std::string>() + "\n";
  if (s["conditions"].contains("EndedEarly"))
    out += "  ENDED EARLY: " + s["conditions"]["EndedEarly"].get<std::string>() + "\n";
  const std::vector<TrialRow> rows = TrialRows(workload::HistoryFromGrainTuning(gt).trials);
  if (rows.empty()) return out + "  no trials yet\n";
  return out + "\n" + TrialTable(rows);
}

}  // namespace graintune::cli
