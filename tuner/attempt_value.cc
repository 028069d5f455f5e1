#include "tuner/attempt_value.h"

#include <algorithm>
#include <cmath>

namespace graintune {

AttemptValue ValueForAttempt(const TuningInputs& inputs,
                             const std::optional<TuningHistory>& history,
                             const AttemptQuery& query) {
  AttemptValue v;
  v.attempt = query.attempt;
  std::string new_run;
  if (!query.announces_first_attempt && history && history->ended_attempts.count(v.attempt) &&
      history->recommendation_attempt > v.attempt) {
    new_run = "attempt " + std::to_string(v.attempt) + " ended; this run is attempt " +
              std::to_string(history->recommendation_attempt) + ". ";
    v.attempt = history->recommendation_attempt;
  }
  const Trial* measured = nullptr;
  if (history && history->recommendation_attempt > v.attempt)
    for (const Trial& t : history->trials)
      if (t.attempt == v.attempt) measured = &t;
  const bool initial = inputs.policy.mode == Mode::kInitial;
  const Trial* first_trial = nullptr;
  if (history && initial)
    for (const Trial& t : history->trials)
      if (!first_trial || t.attempt < first_trial->attempt) first_trial = &t;

  if (first_trial && !measured) {
    v.workers = first_trial->workers;
    v.reason = "policy mode Initial: keeps the value attempt " +
               std::to_string(first_trial->attempt) + " was given (" +
               std::to_string(first_trial->workers) + ")";
  } else if (measured) {
    v.workers = measured->workers;
    v.reason = "attempt " + std::to_string(v.attempt) + " ran with " +
               std::to_string(measured->workers) + " workers";
  } else if (history && history->recommended_workers &&
             (!initial || history->recommendation_attempt == 0)) {
    if (!query.has_restart_label) v.attempt = history->recommendation_attempt;
    v.workers = *history->recommended_workers;
    v.reason = "attempt " + std::to_string(history->recommendation_attempt) + ": " +
               history->recommendation_reason;
  } else if (query.only_applied_values) {
    v.keep_as_written = true;
    return v;
  } else {
    Decision d = Decide(inputs, history ? history->trials : std::vector<Trial>{});
    v.workers = d.workers;
    v.reason = d.reason;
    v.decision = std::move(d);
  }
  v.reason = new_run + v.reason;
  if (v.reason.size() > kMaxReasonBytes) v.reason.resize(kMaxReasonBytes);
  return v;
}

WorkerSplit SplitWithEval(int workers, int ceiling) {
  WorkerSplit s;
  s.eval_workers = std::max(1, static_cast<int>(std::ceil(workers / 4.0)));
  s.workers = workers + s.eval_workers > ceiling ? std::max(1, ceiling - s.eval_workers) : workers;
  return s;
}

}  // namespace graintune
