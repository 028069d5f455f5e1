// A GrainTuning's spec and status (crds/graintune.dev_graintunings.yaml is the schema) as typed
// values, and the one place their JSON keys are spelled: FromJson reads what the API server
// serves, ToJson writes what the operator stores. Beside the fields, the rules over them: when
// two statuses say the same, and when a change is only the progress of running attempts.
// (grain_tuning_status.cc spells the keys; grain_tuning_status_records.cc converts to and from the
// tuner's records; grain_tuning_status_progress.cc holds the progress rule.)
//
// Reading never throws and never fails: a field of the wrong type, a number out of its field's
// range, or a list entry of the wrong type reads as absent (the API server validates the stored
// object against the CRD, so these come only from hand-made objects), and so does a trial
// without a readable attempt or a condition without a type; keys the CRD does not declare are
// ignored (the API server prunes them anyway). A list keeps at most kMaxStatusListEntries
// entries (the CRD allows 64 trials and 32 runs). An empty list is written as absent. Fields
// that are plain values (not std::optional) are always written. ToJson(FromJson(x)) == x for
// every object whose fields are all set (grain_tuning_status_test checks this for every field
// the CRD declares).
//
// Pure functions over values; no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/attempt_value.h"
#include "tuner/trial.h"

namespace graintune::workload {

inline constexpr size_t kMaxStatusListEntries = 256;

// The workload a GrainTuning was created for (spec.workload).
struct WorkloadRef {
  std::optional<std::string> api_version, kind, name, uid;
  bool operator==(const WorkloadRef&) const = default;
};

struct GrainTuningSpec {
  std::string tuning_key;
  std::optional<WorkloadRef> workload;
  std::optional<std::string> policy_name;
  std::optional<std::string> mode;  // Auto | Initial | Off (absent: Auto)
  std::optional<int> min_workers, max_workers;
  std::optional<std::string> dataset, dataset_kind;
  std::optional<std::string> demand_key;  // as read when the GrainTuning was created
  std::vector<std::string> learned_from;  // namespace/name of the GrainTunings its first pick used
  std::optional<bool> paused;
  bool operator==(const GrainTuningSpec&) const = default;
};

// One attempt's measurements as stored (status.trials[], status.lastTrial): figures rounded to
// what a measurement can tell (TrialStatusOf).
struct TrialStatus {
  int attempt = 0;
  int workers = 0;
  std::optional<double> step_time_p50_seconds, step_time_p90_seconds, step_time_mean_seconds;
  std::optional<double> tflops_per_device, tokens_per_second, stall_fraction, buffered_step_seconds;
  std::optional<bool> data_bound, oom_killed;
  std::optional<int> samples;
  std::optional<double> worker_busy_fraction, worker_memory_bytes, trainer_memory_bytes, trainer_cpu_cores;
  std::optional<std::string> start_time, end_time;
  bool operator==(const TrialStatus&) const = default;
};

// A Trial as stored: step times to the millisecond, tokens to the whole token, TFLOP/s to 0.1;
// figures that were not measured are left out.
TrialStatus TrialStatusOf(const Trial& trial);
// A stored trial as the tuner judges it (a stored data-bound verdict is kept).
Trial TrialOf(const TrialStatus& trial);

struct RecommendationStatus {
  std::optional<int> workers, per_worker_buffer, attempt;
  std::optional<std::string> reason, decided_at;
  bool operator==(const RecommendationStatus&) const = default;
};

// A run (checkpoint directory) whose attempts keep the value its first attempt ran.
struct RunStatus {
  std::string checkpoint_dir;
  int workers = 0;
  std::optional<int> first_attempt;
  bool operator==(const RunStatus&) const = default;
};

// What this workload's attempts teach other runs (tuner/learning.h).
struct LearnedStatus {
  std::optional<std::string> machine_type;
  std::optional<double> tokens_per_second_per_worker;
  std::optional<std::string> rate_basis;
  std::optional<double> worker_memory_bytes, fed_tokens_per_second_per_host;
  std::optional<std::string> demand_key;
  bool operator==(const LearnedStatus&) const = default;
};

struct NextRunStatus {
  std::optional<int> workers;
  std::optional<std::string> reason;
  bool operator==(const NextRunStatus&) const = default;
};

// The newest attempt whose trainer exited 0 before its configured steps.
struct EndedEarlyStatus {
  int attempt = 0;
  std::string pod;
  int64_t last_step = 0;
  int64_t steps = 0;
  bool operator==(const EndedEarlyStatus&) const = default;
};

// The practice lap of a run's first attempt (status.lap; docs/practice-lap.md): the answer the
// operator gave its pods (graintune.dev/lap-value) and what the laps measured.
inline constexpr size_t kMaxLapStartedValues = 16;

struct LapStatus {
  int attempt = 0;
  std::string answer;              // as written: "N" (the run's value) or "none: why"
  std::optional<int> workers;      // the run's value, when the answer is one
  int admission_workers = 0;       // the value the laps ran with (admission's)
  int hosts = 0;                   // laps the answer was decided from
  std::optional<double> wall_seconds;          // the longest lap
  std::optional<double> step_seconds;          // the slowest host's steady step
  std::optional<double> worker_busy_fraction;  // that host's workers' busy share
  std::optional<double> worker_memory_bytes;   // the highest worker peak any host showed
  std::optional<std::string> answered_at;
  // Whether the trainer after the laps found its train step in the JAX compilation cache the lap
  // filled, as the first host to report it judged (contract/trainer_compile.h): "CacheHit",
  // "Compiled" or "Unknown" (with why); absent until a host reports it.
  std::optional<std::string> trainer_compile;
  std::optional<std::string> trainer_compile_why;
  // The value each host's launcher started its trainer with (contract/lap_result.h), as the
  // hosts reported it: how many did, and the distinct values, ascending (one, unless the slice
  // runs mixed values; at most kMaxLapStartedValues).
  int started_hosts = 0;
  std::vector<int> started_values;
  bool operator==(const LapStatus&) const = default;
};

// What graintune's start check saw at the newest checked start of the trainer (status.startCheck;
// docs/start-check.md): the count MaxText's own loader read from the start, the count the run's
// checkpoint saved its Grain iterator with, and the count the trainer started with. `checked`
// false: the check failed open (why says what failed) and the trainer started as written.
struct StartCheckStatus {
  int attempt = 0;
  std::string pod;
  bool checked = false;
  std::optional<int> admission_workers;  // what graintune wrote
  std::optional<int> written_workers;    // what MaxText read from the start
  std::optional<int> started_workers;    // what the trainer started with
  std::optional<int> saved_workers;      // the checkpoint's Grain iterator, when per-worker
  std::optional<int64_t> checkpoint_step;
  std::optional<std::string> dataset_type;
  std::string why;
  bool operator==(const StartCheckStatus&) const = default;
};

struct ConditionStatus {
  std::string type;
  std::string status;  // True | False | Unknown
  std::optional<int64_t> observed_generation;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  bool operator==(const ConditionStatus&) const = default;
};

struct GrainTuningStatus {
  std::optional<std::string> phase;  // Exploring | Converged | Paused
  std::optional<int64_t> observed_generation;
  std::optional<RecommendationStatus> recommendation;
  std::vector<TrialStatus> trials;  // oldest first
  std::optional<TrialStatus> last_trial;
  std::vector<int> ended_attempts;
  std::optional<double> learned_tokens_per_second_per_worker;
  std::vector<RunStatus> runs;
  std::optional<LearnedStatus> learned;
  std::optional<NextRunStatus> next_run;
  std::optional<int> pinned_attempt;
  std::optional<EndedEarlyStatus> ended_early;
  std::optional<LapStatus> lap;
  std::optional<StartCheckStatus> start_check;
  std::vector<ConditionStatus> conditions;
  bool operator==(const GrainTuningStatus&) const = default;
};

GrainTuningSpec SpecFromJson(const nlohmann::json& spec);
nlohmann::json ToJson(const GrainTuningSpec& spec);
GrainTuningStatus StatusFromJson(const nlohmann::json& status);
nlohmann::json ToJson(const GrainTuningStatus& status);
nlohmann::json ToJson(const TrialStatus& trial);
nlohmann::json ToJson(const EndedEarlyStatus& ended);
nlohmann::json ToJson(const RunStatus& run);
nlohmann::json ToJson(const LapStatus& lap);
nlohmann::json ToJson(const StartCheckStatus& check);

// The spec and status of a GrainTuning object (anything but an object: empty ones).
GrainTuningSpec SpecOf(const nlohmann::json& grain_tuning);
GrainTuningStatus StatusOf(const nlohmann::json& grain_tuning);
// The status without its trials (trials and lastTrial left empty): what a lookup across every
// GrainTuning (learned figures, runs) reads, without copying the trials.
GrainTuningStatus StatusWithoutTrialsOf(const nlohmann::json& grain_tuning);
// The status without any list (trials, lastTrial, runs, endedAttempts, conditions): what a
// lookup of learned figures across every GrainTuning reads, per admission.
GrainTuningStatus StatusWithoutListsOf(const nlohmann::json& grain_tuning);

// A new GrainTuning object (apiVersion, kind, metadata with its name and tuning-key-hash label,
// spec) in namespace `ns`.
nlohmann::json NewGrainTuning(const std::string& ns, const GrainTuningSpec& spec);

// status.runs as records by checkpoint directory: entries without a directory or a positive
// worker count are skipped; of two entries for one directory the first counts.
std::map<std::string, RunRecord> RunRecordsOf(const std::vector<RunStatus>& runs);
RunStatus RunStatusOf(const std::string& checkpoint_dir, const RunRecord& run);

// The trial of `attempt` in `status` (the first one listed); nullopt when none.
std::optional<TrialStatus> TrialOfAttempt(const GrainTuningStatus& status, int attempt);

// --- The progress rule -------------------------------------------------------------------
// The operator writes progress at most every ControllerOptions::progress_write_interval per
// key and anything else at once.

// Whether two statuses say the same, apart from the fields every write renews (the
// recommendation's decidedAt, the conditions' lastTransitionTime).
bool StatusEquivalent(const GrainTuningStatus& a, const GrainTuningStatus& b);

// Whether `desired` differs from `stored` only in how far running attempts have got: a
// trial's figures (samples, step times, throughput, stall fraction, memory), the learned
// figures, or the recommendation's and the next run's reason (which quote them). What anything
// acts on is unchanged: the trials' attempts, workers, OOM and data-bound verdicts, whether a
// trial has a worker memory figure and which learned figures exist at all (later workloads of
// the dataset start from them), the recommended value, phase, conditions and ended attempts.
// False when the two are equivalent.
bool ProgressOnly(const GrainTuningStatus& stored, const GrainTuningStatus& desired);

// Whether the trial of any of `attempts` differs between the two statuses (one has it and the
// other not, or any field differs).
bool TrialsDiffer(const GrainTuningStatus& stored, const GrainTuningStatus& desired,
                  const std::set<int>& attempts);

}  // namespace graintune::workload
