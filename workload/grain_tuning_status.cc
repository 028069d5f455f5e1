#include "workload/grain_tuning_status.h"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>

#include "workload/graintune_objects.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

// Each record's fields with their JSON keys, spelled once: `visit(key, field)` per field;
// std::optional and std::vector fields may be absent. A list entry without its identifying
// field (kIdentifies: a trial's attempt, a condition's type) is skipped when read.
inline constexpr bool kIdentifies = true;
template <typename T, typename R>
concept Of = std::same_as<std::remove_const_t<T>, R>;

template <typename V, Of<WorkloadRef> T>
void Fields(V& visit, T& w) {
  visit("apiVersion", w.api_version);
  visit("kind", w.kind);
  visit("name", w.name);
  visit("uid", w.uid);
}

template <typename V, Of<GrainTuningSpec> T>
void Fields(V& visit, T& s) {
  visit("tuningKey", s.tuning_key);
  visit("workload", s.workload);
  visit("policyName", s.policy_name);
  visit("mode", s.mode);
  visit("minWorkers", s.min_workers);
  visit("maxWorkers", s.max_workers);
  visit("dataset", s.dataset);
  visit("datasetKind", s.dataset_kind);
  visit("demandKey", s.demand_key);
  visit("learnedFrom", s.learned_from);
  visit("paused", s.paused);
}

template <typename V, Of<TrialStatus> T>
void Fields(V& visit, T& t) {
  visit("attempt", t.attempt, kIdentifies);
  visit("workers", t.workers);
  visit("stepTimeP50Seconds", t.step_time_p50_seconds);
  visit("stepTimeP90Seconds", t.step_time_p90_seconds);
  visit("stepTimeMeanSeconds", t.step_time_mean_seconds);
  visit("tflopsPerDevice", t.tflops_per_device);
  visit("tokensPerSecond", t.tokens_per_second);
  visit("stallFraction", t.stall_fraction);
  visit("bufferedStepSeconds", t.buffered_step_seconds);
  visit("dataBound", t.data_bound);
  visit("oomKilled", t.oom_killed);
  visit("samples", t.samples);
  visit("workerBusyFraction", t.worker_busy_fraction);
  visit("workerMemoryBytes", t.worker_memory_bytes);
  visit("trainerMemoryBytes", t.trainer_memory_bytes);
  visit("trainerCpuCores", t.trainer_cpu_cores);
  visit("startTime", t.start_time);
  visit("endTime", t.end_time);
}

template <typename V, Of<RecommendationStatus> T>
void Fields(V& visit, T& r) {
  visit("workers", r.workers);
  visit("perWorkerBuffer", r.per_worker_buffer);
  visit("attempt", r.attempt);
  visit("reason", r.reason);
  visit("decidedAt", r.decided_at);
}

template <typename V, Of<RunStatus> T>
void Fields(V& visit, T& r) {
  visit("checkpointDir", r.checkpoint_dir);
  visit("workers", r.workers);
  visit("firstAttempt", r.first_attempt);
}

template <typename V, Of<LearnedStatus> T>
void Fields(V& visit, T& l) {
  visit("machineType", l.machine_type);
  visit("tokensPerSecondPerWorker", l.tokens_per_second_per_worker);
  visit("rateBasis", l.rate_basis);
  visit("workerMemoryBytes", l.worker_memory_bytes);
  visit("fedTokensPerSecondPerHost", l.fed_tokens_per_second_per_host);
  visit("demandKey", l.demand_key);
}

template <typename V, Of<NextRunStatus> T>
void Fields(V& visit, T& n) {
  visit("workers", n.workers);
  visit("reason", n.reason);
}

template <typename V, Of<EndedEarlyStatus> T>
void Fields(V& visit, T& e) {
  visit("attempt", e.attempt);
  visit("pod", e.pod);
  visit("lastStep", e.last_step);
  visit("steps", e.steps);
}

template <typename V, Of<LapStatus> T>
void Fields(V& visit, T& l) {
  visit("attempt", l.attempt);
  visit("answer", l.answer);
  visit("workers", l.workers);
  visit("admissionWorkers", l.admission_workers);
  visit("hosts", l.hosts);
  visit("wallSeconds", l.wall_seconds);
  visit("stepSeconds", l.step_seconds);
  visit("workerBusyFraction", l.worker_busy_fraction);
  visit("workerMemoryBytes", l.worker_memory_bytes);
  visit("answeredAt", l.answered_at);
  visit("trainerCompile", l.trainer_compile);
  visit("trainerCompileWhy", l.trainer_compile_why);
  visit("startedHosts", l.started_hosts);
  visit("startedValues", l.started_values);
}

template <typename V, Of<StartCheckStatus> T>
void Fields(V& visit, T& c) {
  visit("attempt", c.attempt);
  visit("pod", c.pod);
  visit("checked", c.checked);
  visit("admissionWorkers", c.admission_workers);
  visit("writtenWorkers", c.written_workers);
  visit("startedWorkers", c.started_workers);
  visit("savedWorkers", c.saved_workers);
  visit("checkpointStep", c.checkpoint_step);
  visit("datasetType", c.dataset_type);
  visit("why", c.why);
}

template <typename V, Of<ConditionStatus> T>
void Fields(V& visit, T& c) {
  visit("type", c.type, kIdentifies);
  visit("status", c.status);
  visit("observedGeneration", c.observed_generation);
  visit("lastTransitionTime", c.last_transition_time);
  visit("reason", c.reason);
  visit("message", c.message);
}

template <typename V, Of<GrainTuningStatus> T>
void Fields(V& visit, T& s) {
  visit("phase", s.phase);
  visit("observedGeneration", s.observed_generation);
  visit("recommendation", s.recommendation);
  visit("trials", s.trials);
  visit("lastTrial", s.last_trial);
  visit("endedAttempts", s.ended_attempts);
  visit("learnedTokensPerSecondPerWorker", s.learned_tokens_per_second_per_worker);
  visit("runs", s.runs);
  visit("learned", s.learned);
  visit("nextRun", s.next_run);
  visit("pinnedAttempt", s.pinned_attempt);
  visit("endedEarly", s.ended_early);
  visit("lap", s.lap);
  visit("startCheck", s.start_check);
  visit("conditions", s.conditions);
}

template <typename T>
concept Record = std::same_as<T, WorkloadRef> || std::same_as<T, GrainTuningSpec> ||
                 std::same_as<T, TrialStatus> || std::same_as<T, RecommendationStatus> ||
                 std::same_as<T, RunStatus> || std::same_as<T, LearnedStatus> ||
                 std::same_as<T, NextRunStatus> || std::same_as<T, EndedEarlyStatus> || std::same_as<T, LapStatus> ||
                 std::same_as<T, StartCheckStatus> || std::same_as<T, ConditionStatus> || std::same_as<T, GrainTuningStatus>;

template <typename T> struct IsOptional : std::false_type {};
template <typename T> struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T> struct IsVector : std::false_type {};
template <typename T> struct IsVector<std::vector<T>> : std::true_type {};

// --- Reading: false (and `out` untouched) when `value` does not read as the type. -----------

bool Read(const json& value, int64_t& out) {
  if (!value.is_number_integer()) return false;
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return false;
  out = value.get<int64_t>();
  return true;
}

bool Read(const json& value, int& out) {
  int64_t wide = 0;
  if (!Read(value, wide) || wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
    return false;
  out = static_cast<int>(wide);
  return true;
}

bool Read(const json& value, double& out) {
  if (!value.is_number()) return false;
  out = value.get<double>();
  return true;
}

bool Read(const json& value, bool& out) {
  if (!value.is_boolean()) return false;
  out = value.get<bool>();
  return true;
}

bool Read(const json& value, std::string& out) {
  if (!value.is_string()) return false;
  out = value.get<std::string>();
  return true;
}

// How much of a status to read: all of it, all but the trials, or none of its lists.
enum class Lists { kAll, kNoTrials, kNone };

template <Record T>
bool Read(const json& value, T& out, Lists lists = Lists::kAll);

template <typename T>
bool Read(const json& value, std::vector<T>& out) {
  if (!value.is_array()) return false;
  for (const json& entry : value) {
    if (out.size() >= kMaxStatusListEntries) break;
    T item{};
    if (Read(entry, item)) out.push_back(std::move(item));
  }
  return true;
}

template <typename T>
bool Read(const json& value, std::optional<T>& out) {
  T item{};
  if (!Read(value, item)) return false;
  out = std::move(item);
  return true;
}

class Reader {
 public:
  Reader(const json& object, Lists lists) : object_(object), lists_(lists) {}

  template <typename T>
  void operator()(const char* key, T& field, bool identifies = false) {
    if constexpr (std::is_same_v<T, std::vector<TrialStatus>> || std::is_same_v<T, std::optional<TrialStatus>>)
      if (lists_ != Lists::kAll) return;
    if constexpr (IsVector<T>::value)
      if (lists_ == Lists::kNone) return;
    auto it = object_.find(key);
    const bool read = it != object_.end() && Read(*it, field);
    if (identifies && !read) complete_ = false;
  }
  bool complete() const { return complete_; }

 private:
  const json& object_;
  Lists lists_;
  bool complete_ = true;
};

template <Record T>
bool Read(const json& value, T& out, Lists lists) {
  if (!value.is_object()) return false;
  T item{};
  Reader reader(value, lists);
  Fields(reader, item);
  if (!reader.complete()) return false;
  out = std::move(item);
  return true;
}

// --- Writing ---------------------------------------------------------------------------------

template <typename T>
json Write(const T& value);

class Writer {
 public:
  explicit Writer(json& object) : object_(object) {}

  template <typename T>
  void operator()(const char* key, const T& field, bool /*identifies*/ = false) {
    if constexpr (IsOptional<T>::value) {
      if (field) object_[key] = Write(*field);
    } else if constexpr (IsVector<T>::value) {
      if (field.empty()) return;
      json list = json::array();
      for (const auto& item : field) list.push_back(Write(item));
      object_[key] = std::move(list);
    } else {
      object_[key] = Write(field);
    }
  }

 private:
  json& object_;
};

template <typename T>
json Write(const T& value) {
  if constexpr (Record<T>) {
    json object = json::object();
    Writer writer(object);
    Fields(writer, value);
    return object;
  } else {
    return json(value);
  }
}

template <Record T>
T FromJsonOrEmpty(const json& value, Lists lists = Lists::kAll) {
  T out{};
  Read(value, out, lists);
  return out;
}

const json& Member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it != object.end() ? *it : kNull;
}

}  // namespace

GrainTuningSpec SpecFromJson(const json& spec) { return FromJsonOrEmpty<GrainTuningSpec>(spec); }
json ToJson(const GrainTuningSpec& spec) { return Write(spec); }
GrainTuningStatus StatusFromJson(const json& status) { return FromJsonOrEmpty<GrainTuningStatus>(status); }
json ToJson(const GrainTuningStatus& status) { return Write(status); }
json ToJson(const TrialStatus& trial) { return Write(trial); }
json ToJson(const EndedEarlyStatus& ended) { return Write(ended); }
json ToJson(const LapStatus& lap) { return Write(lap); }
json ToJson(const StartCheckStatus& check) { return Write(check); }
json ToJson(const RunStatus& run) { return Write(run); }

GrainTuningSpec SpecOf(const json& gt) { return SpecFromJson(Member(gt, "spec")); }
GrainTuningStatus StatusOf(const json& gt) { return StatusFromJson(Member(gt, "status")); }
GrainTuningStatus StatusWithoutTrialsOf(const json& gt) {
  return FromJsonOrEmpty<GrainTuningStatus>(Member(gt, "status"), Lists::kNoTrials);
}
GrainTuningStatus StatusWithoutListsOf(const json& gt) {
  return FromJsonOrEmpty<GrainTuningStatus>(Member(gt, "status"), Lists::kNone);
}

json NewGrainTuning(const std::string& ns, const GrainTuningSpec& spec) {
  const std::string name = GrainTuningName(spec.tuning_key);
  return {{"apiVersion", "graintune.dev/v1alpha1"},
          {"kind", "GrainTuning"},
          {"metadata", {{"name", name},
                        {"namespace", ns},
                        {"labels", {{"graintune.dev/tuning-key-hash", name.substr(0, 63)}}}}},
          {"spec", ToJson(spec)}};
}

std::optional<TrialStatus> TrialOfAttempt(const GrainTuningStatus& status, int attempt) {
  for (const TrialStatus& t : status.trials)
    if (t.attempt == attempt) return t;
  return std::nullopt;
}

}  // namespace graintune::workload
