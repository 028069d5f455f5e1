// The value one attempt of a workload gets: the rules that sit between the history the
// operator recorded (TuningHistory) and Decide().
//
// All pods of one attempt get one value, and an attempt's value is decided once:
//   0. A run that may restore Grain's iterator from its checkpoints keeps one value (a resume
//      with another grain_worker_count stops MaxText early with exit 0): the value recorded for
//      its checkpoint directory, else the value its templates already hold (a JobSet restart,
//      a Job retry, a Kueue re-admission); a run seen for the first time gets the value learned
//      for the next run (TuningHistory::next_run_workers), else the rules below with Decide()
//      sizing a value kept for a whole run (ValueLifetime::kRun), and keeps it.
//   1. A run of an attempt whose pods are all gone (an ended attempt: a Kueue re-admission
//      after preemption, a resubmission under the same tuning key) is a new attempt: the one
//      the recommendation is for.
//   2. Policy mode Initial: the value the first recorded attempt was given is kept.
//   3. A late pod of an attempt that was already measured keeps that attempt's value.
//   4. The operator's recommendation for the next attempt wins (in Initial mode only while
//      no attempt has been recorded).
//   5. A pod whose every site holds the value graintune applied earlier, with nothing newer
//      known, is left as it is.
//   6. Otherwise Decide() over the inputs and the recorded trials.
// Then the eval pipeline's share (SplitWithEval).
//
// Plain values in, plain values out: no clock, I/O or logging; callable from the webhook, the
// CLI and tests alike.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/decision.h"
#include "tuner/trial.h"

namespace graintune {

// The value a run (one checkpoint directory) was started with.
struct RunRecord {
  int workers = 0;
  int first_attempt = 0;
};

// What the operator recorded for one tuning key (a GrainTuning's status).
struct TuningHistory {
  std::vector<Trial> trials;
  std::optional<int> recommended_workers;  // the value for the recommended attempt
  int recommendation_attempt = 0;
  std::string recommendation_reason;
  // Attempts with a trial whose pods are all gone (status.endedAttempts): a pod that still
  // names one of them starts a new run, the recommended attempt.
  std::set<int> ended_attempts;
  std::string mode = "Auto";  // Auto | Initial | Off
  // Runs that keep their value, by checkpoint directory (status.runs).
  std::map<std::string, RunRecord> runs;
  // The value for the next run of this workload, learned from earlier ones (status.nextRun).
  std::optional<int> next_run_workers;
  std::string next_run_reason;
};

// The object under admission, as far as the rules care.
struct AttemptQuery {
  int attempt = 0;  // the attempt the object names (AttemptOf, plus a plain Job's failed pods)
  // The object carries JobSet's restart-attempt label; without it a plain Job's pod retry is
  // the attempt the recommendation is for.
  bool has_restart_label = false;
  // A JobSet announces its first attempt's value; it is never a new run of an ended attempt.
  bool announces_first_attempt = false;
  // Every site found holds a value graintune applied earlier (none asks for -1).
  bool only_applied_values = false;
  // The attempt may restore Grain's iterator from `checkpoint_dir` (workload/run_resume.h).
  bool pins_workers = false;
  std::string checkpoint_dir;
  // With only_applied_values: the training value the sites hold.
  std::optional<int> written_workers;
};

struct AttemptValue {
  bool keep_as_written = false;  // rule 5: nothing to change
  int attempt = 0;               // the attempt the value is for
  int workers = 0;
  std::string reason;
  std::optional<Decision> decision;  // set when Decide() made the value (rule 6)
};

// `history` is nullopt when none is recorded (or it could not be read). The reason is cut to
// kMaxReasonBytes.
AttemptValue ValueForAttempt(const TuningInputs& inputs,
                             const std::optional<TuningHistory>& history,
                             const AttemptQuery& query);

inline constexpr size_t kMaxReasonBytes = 1024;

// Why an attempt of a run that resumes Grain's iterator keeps the run's value, and what the next
// run gets: "this run resumes Grain's iterator from its checkpoints (DIR); attempt 2 keeps 4
// workers; the next run of this workload gets 9".
std::string PinnedRunReason(const std::string& checkpoint_dir, int attempt, int workers,
                            std::optional<int> next_run_workers);

struct WorkerSplit {
  int workers = 0;
  int eval_workers = 0;
};

// The eval pipeline's workers live beside the training workers: a quarter of the training
// count (at least 1), and the two together stay within `ceiling` (the training side gives way,
// down to 1). Idempotent: splitting the training count it returns gives the same split.
WorkerSplit SplitWithEval(int workers, int ceiling);

}  // namespace graintune
