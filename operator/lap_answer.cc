#include "operator/lap_answer.h"

#include <algorithm>
#include <climits>

#include "contract/lap_answer_text.h"
#include "operator/tuning_reconciler.h"

namespace graintune::op {
namespace {

LapAnswer None(const std::string& why) { return LapAnswer{.text = contract::FormatNoLapValue(why)}; }

// Every waiting pod's lap as the tuner reads it; an error names the pod whose report cannot be.
Result<std::vector<LapFigures>> LapsOf(const std::vector<const PodFacts*>& waiting,
                                       const std::map<std::string, telemetry::LapReport>& reports,
                                       const TuningInputs& inputs, int warmup_steps) {
  std::vector<LapFigures> laps;
  for (const PodFacts* p : waiting) {
    const telemetry::LapReport& report = reports.at(p->uid);
    telemetry::StepsDocument doc;
    doc.steps = report.steps;
    doc.process = report.process;
    const int workers = report.result->workers > 0 ? report.result->workers : p->admission_workers;
    Result<Trial> trial =
        TrialFromSteps(p->attempt, workers, doc, inputs.demand.tokens_per_step_per_host, warmup_steps);
    if (!trial.ok()) return Status::Error("the lap of " + p->name + ": " + trial.error());
    laps.push_back(LapFiguresOf(*trial, LapKind::kTraining));
  }
  return laps;
}

}  // namespace

std::optional<LapAnswer> AnswerLaps(const std::vector<PodFacts>& pods,
                                    const std::map<std::string, telemetry::LapReport>& reports,
                                    const TuningInputs& inputs, int warmup_steps) {
  std::vector<const PodFacts*> waiting;
  for (const PodFacts& p : pods)
    if (p.AwaitsLapAnswer() && !p.terminating) waiting.push_back(&p);
  if (waiting.empty()) return std::nullopt;
  for (const PodFacts& p : pods)
    if (p.lap_answer) return LapAnswer{.text = *p.lap_answer};

  double oldest = -1, longest = 0;
  int wait = INT_MAX;
  bool all_reported = true;
  for (const PodFacts* p : waiting) {
    wait = std::min(wait, p->lap_answer_wait_seconds);
    // An OOM kill of the container itself (memory.oom.group takes the launcher too) leaves no result.
    if (p->oom_killed) return None("the lap of " + p->name + " was OOM-killed");
    auto it = reports.find(p->uid);
    if (it == reports.end() || !it->second.result) {
      all_reported = false;
      continue;
    }
    const contract::LapResult& r = *it->second.result;
    if (!r.completed) return None("the lap of " + p->name + " " + r.outcome);
    oldest = std::max(oldest, it->second.result_age_seconds);
    longest = std::max(longest, r.wall_seconds);
  }
  if (oldest >= 0 && oldest + kAnswerMarginSeconds > wait)
    return None("the laps' answer came too late: a launcher waits " + std::to_string(wait) +
                " s after its lap, and " + (all_reported ? "the laps were summarised" : "not every host reported its lap") +
                " " + std::to_string(static_cast<long>(oldest)) + " s after the first lap ended");
  if (!all_reported) return std::nullopt;

  Result<std::vector<LapFigures>> laps = LapsOf(waiting, reports, inputs, warmup_steps);
  if (!laps.ok()) return None(laps.error());
  Result<Decision> decision = DecideFromLaps(inputs, *laps, static_cast<int>(waiting.size()));
  if (!decision.ok()) return None(decision.error());
  LapAnswer answer{.text = contract::FormatLapValue(decision->workers), .decision = *decision,
                   .laps = std::move(laps).value(), .wall_seconds = longest};
  return answer;
}

}  // namespace graintune::op
