// The operator's decision for one tuning key, as a pure function: from the GrainTuning as stored,
// the pods of the key, the steps their exporters reported and the inputs a decision is made
// from, compute the GrainTuning's desired status and the Events to record. The I/O around it
// (caches, scraping, status writes with conflict retry, Events) is in tuning_controller.cc.
//
// Rules:
//  - One trial per attempt. An attempt with an OOMKilled pod is an OOM trial (caps the value
//    below its workers). Otherwise its trial is summarised from one pod's steady-state steps
//    (warm-up and compile steps dropped) once there are enough of them, and updated while the
//    attempt runs; a stored trial is never replaced by one with fewer samples (a restarted
//    operator, or an exporter that restarted, loses nothing).
//  - Once the newest attempt has a trial, the recommendation is for the next attempt: tuner
//    Decide() over all trials. Before that, the recommendation is the value the newest attempt
//    runs with.
//  - At most kMaxStoredTrials trials are kept (BoundTrials), so a workload restarted
//    thousands of times keeps a GrainTuning the API server accepts.
//  - An attempt with a trial and no pod left alive has ended (status.endedAttempts, never
//    undone): a pod naming it later is a new run, which the webhook numbers as the next
//    attempt (a Kueue re-admission after preemption deletes and recreates every pod).
//  - Phase: Paused when spec.paused or the policy mode is Off; else Decide()'s phase.
//  - Practice laps: the pods of an attempt waiting for their lap's answer get one (AnswerLaps),
//    recorded first in status.lap; a pod's run is recorded in status.runs only once it has it.
//  - Events: RecommendationChanged (the value for a new attempt differs), Converged (phase
//    turned Converged), CappedByOOM (Warning, an OOM trial was recorded), LapAnswered (the
//    laps gave the run its value) or LapGaveNoValue (Warning, with why).
#pragma once

#include <chrono>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "operator/pod_facts.h"
#include "telemetry/step_log.h"
#include "tuner/decision.h"
#include "tuner/trial.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {

struct ReconcileInput {
  std::string ns;
  std::string tuning_key;
  std::optional<nlohmann::json> grain_tuning;  // as stored; nullopt: it must be created
  std::vector<PodFacts> pods;                  // of this key, any attempt
  std::map<int, telemetry::StepsDocument> steps;          // attempt -> what one of its pods reported
  std::map<int, Trial> measured;               // attempt -> a trial built elsewhere (Prometheus)
  std::map<std::string, telemetry::LapReport> laps;  // pod uid -> the practice lap it reported
  std::optional<TuningInputs> inputs;          // nullopt: the pods' spec could not be read
  std::string policy_name;                     // for spec.policyName
  std::string dataset_kind;                    // for spec.datasetKind
  std::string now;                             // RFC 3339, for timestamps
  int warmup_steps = 2;
  // Steady-state steps a trial needs before it is recorded: fewer judge an attempt by its
  // first, buffered steps.
  int min_samples = 8;
};

struct EventToRecord {
  std::string type;  // Normal | Warning
  std::string reason;
  std::string note;
};

// The answer to a practice lap (lap_answer.h) to write on pods (graintune.dev/lap-value).
struct LapAnswerWrite {
  std::string answer;
  std::vector<std::string> pods;  // names, in the key's namespace
};

struct ReconcileOutput {
  nlohmann::json object;   // the GrainTuning to create (when input had none), spec + metadata
  nlohmann::json status;   // the desired status
  bool status_changed = false;
  std::vector<EventToRecord> events;
  std::string problem;     // why no decision could be made, when none was
  std::optional<LapAnswerWrite> lap_answer;  // after the status is written
};

// Summarises one attempt from its exporter's steps; error when too few steady steps yet.
Result<Trial> TrialFromSteps(int attempt, int workers, const telemetry::StepsDocument& doc,
                             double tokens_per_step_per_host, int warmup_steps);

ReconcileOutput ReconcileTuning(const ReconcileInput& in);

// The most trials a GrainTuning keeps: its status must stay far below the API server's object
// size limit (etcd's 1.5 MiB) however often a workload restarts; 64 trials are ~25 KiB.
inline constexpr size_t kMaxStoredTrials = 64;

// `trials` (attempt -> trial) cut to at most `max`: first an older trial goes when a newer one
// has the same worker count and outcome (OOMKilled or not), which is what Decide() learns
// from; then the oldest trials that were not OOMKilled; then the oldest. The newest trial
// always stays.
std::map<int, Trial> BoundTrials(std::map<int, Trial> trials, size_t max = kMaxStoredTrials);

// A GrainTuning none of whose pods is left, with no activity (creation, recommendation, trial,
// condition change) for `forget_after`, may be deleted: workloads named afresh for every run
// (xpk's usual) would otherwise leave one GrainTuning each, forever, in every cache that
// watches them. Its learned per-worker rate goes with it. False when forget_after is 0 or no
// time in it can be read. `now`: seconds since the epoch.
bool Forgettable(const nlohmann::json& grain_tuning, std::chrono::seconds forget_after, std::time_t now);

// status.endedAttempts as it should be: those already there, plus every attempt with a trial
// in `status` that none of `pods` (the key's pods, any attempt) keeps alive; only attempts that
// still have a trial. Sorted.
std::vector<int> EndedAttempts(const workload::GrainTuningStatus& status, const std::vector<PodFacts>& pods);



}  // namespace graintune::op
