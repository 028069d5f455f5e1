#include "tuner/attempt_value.h"

#include <algorithm>
#include <cmath>

namespace graintune {

std::string PinnedRunReason(const std::string& checkpoint_dir, int attempt, int workers,
                            std::optional<int> next_run_workers) {
  std::string reason = "this run resumes Grain's iterator from its checkpoints (" +
                       checkpoint_dir + "); attempt " + std::to_string(attempt) + " keeps " +
                       std::to_string(workers) + " workers";
  if (next_run_workers)
    reason += "; the next run of this workload gets " + std::to_string(*next_run_workers);
  return reason;
}

namespace {

// Rule 1: a pod naming an attempt whose pods are all gone starts a new run, numbered as the
// attempt the recommendation is for; `note` says so.
int AttemptNumber(const std::optional<TuningHistory>& history, const AttemptQuery& query,
                  std::string& note) {
  if (!query.announces_first_attempt && history && history->ended_attempts.count(query.attempt) &&
      history->recommendation_attempt > query.attempt) {
    // The pods count from their own start (a new JobSet, a Job re-created or re-admitted), and
    // so does the text a user reads; the GrainTuning keeps one count per workload so that no
    // start's trials overwrite an earlier one's. A checkpoint folder tells a new run (a folder
    // not seen before) from a re-admission of the same run; without one, graintune cannot tell.
    const std::string own = "its attempt " + std::to_string(query.attempt);
    const std::string filed = "the workload's history (status.trials) files it as attempt " +
                              std::to_string(history->recommendation_attempt);
    if (query.pins_workers && !history->runs.contains(query.checkpoint_dir))
      note = "a new run: " + own + "; " + filed + ", after earlier runs' attempts. ";
    else if (query.pins_workers)
      note = "this run again, re-admitted after " + own + " ended; " + filed + ". ";
    else
      note = own + " had ended, so this is a new run or a re-admission; " + filed + ". ";
    return history->recommendation_attempt;
  }
  return query.attempt;
}

std::string Bounded(std::string reason) {
  if (reason.size() > kMaxReasonBytes) reason.resize(kMaxReasonBytes);
  return reason;
}

AttemptValue FreeValue(const TuningInputs& inputs, const std::optional<TuningHistory>& history,
                       const AttemptQuery& query);

// Rule 0 (attempt_value.h): an attempt of a run that restores Grain's iterator gets the run's
// value: the one it was started with, else the one graintune wrote into the object, else the
// value learned for the workload's next run, else a value decided to last the whole run.
AttemptValue PinnedValue(const TuningInputs& inputs, const std::optional<TuningHistory>& history,
                         const AttemptQuery& query) {
  AttemptValue v;
  std::string new_run;
  v.attempt = AttemptNumber(history, query, new_run);
  const RunRecord* run = nullptr;
  if (history)
    if (auto it = history->runs.find(query.checkpoint_dir); it != history->runs.end())
      run = &it->second;
  if (run && run->workers > 0) {
    v.workers = run->workers;
  } else if (query.only_applied_values && query.written_workers && *query.written_workers > 0) {
    // A JobSet reinvoked after graintune set its templates: nothing to change.
    if (query.announces_first_attempt) {
      v.keep_as_written = true;
      return v;
    }
    v.workers = *query.written_workers;
  } else if (history && history->next_run_workers && *history->next_run_workers > 0) {
    v.workers = *history->next_run_workers;
    v.reason = "first attempt of run " + query.checkpoint_dir + ": " + history->next_run_reason +
               "; the run keeps this value (its checkpoints will hold Grain's iterator)";
  } else {
    // The run's first value, with nothing learned for it: decided as a value kept for a whole
    // run (decision.h), by the free rules.
    AttemptQuery unpinned = query;
    unpinned.pins_workers = false;
    TuningInputs whole_run = inputs;
    whole_run.lifetime = ValueLifetime::kRun;
    v = FreeValue(whole_run, history, unpinned);
    if (v.keep_as_written) return v;
    v.reason += "; the run keeps this value (its checkpoints will hold Grain's iterator)";
    new_run.clear();  // the free rules said it already
  }
  if (v.reason.empty())
    v.reason = PinnedRunReason(query.checkpoint_dir, v.attempt, v.workers,
                               history ? history->next_run_workers : std::nullopt);
  v.reason = Bounded(new_run + v.reason);
  return v;
}

// Rules 1-6 (attempt_value.h): an attempt whose value may change.
AttemptValue FreeValue(const TuningInputs& inputs, const std::optional<TuningHistory>& history,
                       const AttemptQuery& query) {
  AttemptValue v;
  std::string new_run;
  v.attempt = AttemptNumber(history, query, new_run);
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
  v.reason = Bounded(new_run + v.reason);
  return v;
}

}  // namespace

AttemptValue ValueForAttempt(const TuningInputs& inputs,
                             const std::optional<TuningHistory>& history,
                             const AttemptQuery& query) {
  return query.pins_workers ? PinnedValue(inputs, history, query) : FreeValue(inputs, history, query);
}

WorkerSplit SplitWithEval(int workers, int ceiling) {
  // The eval share follows the training count that is kept, not the one asked for: a count
  // that already went through this split (a reinvocation, a pod of a run that keeps its value)
  // then comes back with the same share, where a quarter of the asked-for count did not.
  auto eval_for = [](int w) { return std::max(1, (w + 3) / 4); };
  WorkerSplit s;
  // w + ceil(w/4) grows with w, and is at least 5w/4: start at or just above the largest
  // fitting count, so the loop steps down a few times at most.
  s.workers = std::max(1, std::min(workers, ceiling / 5 * 4 + 4));
  while (s.workers > 1 && s.workers + eval_for(s.workers) > ceiling) --s.workers;
  s.eval_workers = eval_for(s.workers);
  return s;
}

}  // namespace graintune
