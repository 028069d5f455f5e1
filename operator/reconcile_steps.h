// The steps ReconcileTuning() takes, in its order, each a plain function over values (the
// rules are in tuning_reconciler.h):
//   0. the pods as their trainers started (PodsAsStarted): the count the start check reported;
//   1. trials: the stored ones (StoredTrials), OOM kills (RecordOomKills, with their Events),
//      what the pods measured (MergeMeasuredTrials), then RecordTrials (bounded, ended attempts);
//   2. runs and pins (RecordRunsAndPins): status.runs, the newest pinned attempt, ended early;
//      and the practice lap (RecordLap): the answer its pods wait for, status.lap, and then
//      whether its trainer's compile hit the cache the lap filled (RecordTrainerCompile); and
//      what the trainer's start check saw (RecordStartCheck); these three in
//      reconcile_launcher_steps.h;
//   3. recommend (Recommendation): the value for the next attempt, or the admitted one;
//   4. next run (NextRun): the value the next checkpoint directory starts with;
//   5. learn (Learn): what the trials teach other runs;
//   6. conditions (Conditions) and 7. events (StatusEvents).
// No I/O; a step changes only what its arguments pass by non-const reference.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/run_records.h"
#include "operator/tuning_reconciler.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {

// The pods of each attempt, by attempt.
using AttemptPods = std::map<int, std::vector<const PodFacts*>>;
AttemptPods PodsByAttempt(const std::vector<PodFacts>& pods);
AttemptPods PodsByAttempt(std::vector<PodFacts>&&) = delete;  // it points into `pods`

// The newest attempt: the highest any pod names, else the newest trial's, else 0.
int NewestAttempt(const AttemptPods& attempts, const std::vector<Trial>& trials);

// The spec of a GrainTuning created for `in`'s key: its workload (from any pod), policy, mode,
// bounds, dataset and dataset kind.
workload::GrainTuningSpec SpecForNewGrainTuning(const ReconcileInput& in);

// 0. in.pods with each pod's `workers` as its trainer started: the count graintune's start check
// reported for its attempt (docs/start-check.md; a slice's hosts start with one count), in place
// of admission's; 0 (not a value graintune knows, so no trial or run is recorded from it) where
// the trainer started with MaxText's own pick: the check left -1, or failed open on a -1 it was to
// fill. Pods without a report keep admission's (or their lap's) value.
std::vector<PodFacts> PodsAsStarted(const ReconcileInput& in);

// 1. The stored trials by attempt.
std::map<int, Trial> StoredTrials(const workload::GrainTuningStatus& status);
// An attempt with an OOMKilled pod becomes an OOM trial at its pods' value (attempts without a
// value graintune set are left alone); a Warning Event (CappedByOOM, or OOMKilledInPinnedRun
// with the ways out) for each attempt newly recorded so.
std::vector<EventToRecord> RecordOomKills(const AttemptPods& attempts, std::map<int, Trial>& trials);
// Each attempt without an OOM kill, from its exporter's steps (or in.measured), once it has
// in.min_samples steady steps; a stored trial is never replaced by one with fewer samples, and
// a data-bound verdict once stored stays.
void MergeMeasuredTrials(const ReconcileInput& in, const AttemptPods& attempts, std::map<int, Trial>& trials);
// status.trials and lastTrial from `trials` (oldest first; unchanged when empty), and
// status.endedAttempts (EndedAttempts()).
void RecordTrials(const std::vector<Trial>& trials, const std::vector<PodFacts>& pods,
                  workload::GrainTuningStatus& status);

// 2. status.runs (RunsStatus), and status.endedEarly when an attempt ended early.
struct RunsAndPins {
  std::optional<PinnedAttempt> pinned;
  std::optional<EndedEarly> ended_early;
};
RunsAndPins RecordRunsAndPins(const std::vector<PodFacts>& pods, workload::GrainTuningStatus& status);

// 2b-2d. The practice lap, its trainer's compile and the start check: reconcile_launcher_steps.h.

// 3. The recommendation. Once the newest attempt has a trial (`newest_measured`): for attempt
// newest + 1, the pinned run's value when the newest attempt is pinned, else `decision`'s.
// Before that: the value the newest attempt was admitted with, when none is recommended yet, or
// the value its practice lap gave once the lap answered (the attempt runs with that instead).
// Otherwise `old` stays.
std::optional<workload::RecommendationStatus> Recommendation(
    const std::optional<workload::RecommendationStatus>& old, const Decision& decision,
    const AttemptPods& attempts, int newest, bool newest_measured,
    const std::optional<PinnedAttempt>& pinned, int next_run_workers);
// decidedAt: kept while the recommendation says the same, else `now`.
void StampDecidedAt(std::optional<workload::RecommendationStatus>& recommendation,
                    const std::optional<workload::RecommendationStatus>& old, const std::string& now);

// 4. The next run's value: `decision` itself, or, when this workload's runs keep their value
// (a pod pins it), one decided as a value kept for a whole run (decision.h).
workload::NextRunStatus NextRun(const TuningInputs& inputs, const std::vector<Trial>& trials,
                                const std::vector<PodFacts>& pods, const Decision& decision);

// 5. status.learned and learnedTokensPerSecondPerWorker from the trials (tuner/learning.h),
// in whole tokens and bytes as the trials are stored; left as they are when nothing is learned.
void Learn(const std::vector<Trial>& trials, const TuningInputs& inputs, workload::GrainTuningStatus& status);

// 6. The five conditions: Converged, CappedByOOM, MetricsAvailable, ValuePinned, EndedEarly.
// A condition keeps its lastTransitionTime while its status stays.
struct ConditionFacts {
  std::string phase;
  bool capped = false;  // a trial was OOMKilled
  size_t trials = 0;
  std::optional<std::string> pinned;       // the ValuePinned message, when pinned
  std::optional<std::string> ended_early;  // the EndedEarly message, when one ended early
};
std::vector<workload::ConditionStatus> Conditions(const ConditionFacts& facts,
                                                  const std::vector<workload::ConditionStatus>& old,
                                                  const std::string& now);
std::string EndedEarlyMessage(const EndedEarly& ended);

// 7. Events for what changed from `old` to `status`: RecommendationChanged, EndedEarly,
// ValuePinned (once per restart of a pinned run; sets status.pinnedAttempt), Converged.
std::vector<EventToRecord> StatusEvents(const workload::GrainTuningStatus& old, const RunsAndPins& runs,
                                        std::optional<int> next_run_workers,
                                        workload::GrainTuningStatus& status);

}  // namespace graintune::op
