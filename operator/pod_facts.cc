#include "operator/pod_facts.h"

#include <optional>

#include "base/numbers.h"
#include "contract/launcher_flags.h"
#include "telemetry/last_step_message.h"
#include "workload/identity.h"
#include "workload/pod_templates.h"
#include "workload/workload_annotations.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

int PositiveInt(const std::string& text, int fallback) {
  const std::optional<int> v = ParseInt(text);
  return v && *v > 0 ? *v : fallback;
}

// The exporter's last step, from its current or last terminated state's message.
std::optional<long> LastStepOf(const json& container_status) {
  for (const char* state : {"state", "lastState"}) {
    auto s = container_status.find(state);
    if (s == container_status.end() || !s->is_object()) continue;
    auto t = s->find("terminated");
    if (t == s->end() || !t->is_object()) continue;
    auto message = t->find("message");
    if (message != t->end() && message->is_string())
      if (std::optional<long> step = telemetry::ParseLastStepMessage(message->get<std::string>())) return step;
  }
  return std::nullopt;
}

bool TerminatedOom(const json& status) {
  for (const char* state : {"state", "lastState"}) {
    const json s = status.value(state, json::object());
    if (s.value("terminated", json::object()).value("reason", "") == "OOMKilled") return true;
  }
  return false;
}

// The seconds graintune-launcher waits for the run's value (its --answer-wait, read as the
// webhook wrote it: contract/launcher_flags.h), when a container of `spec` starts with it; 0 when
// none does.
int LapAnswerWait(const json& spec) {
  const json containers = spec.value("containers", json::array());
  if (!containers.is_array()) return 0;
  for (const json& c : containers) {
    if (!c.is_object() || !c.contains("command") || !c["command"].is_array() || c["command"].empty()) continue;
    const json& command = c["command"];
    if (!command[0].is_string() || !command[0].get<std::string>().ends_with("/graintune-launcher")) continue;
    std::vector<std::string> words;
    for (const json& word : command)
      if (word.is_string()) words.push_back(word.get<std::string>());
    if (std::optional<int> wait = contract::LauncherSecondsValue(words, contract::LauncherFlag::kAnswerWait))
      return *wait;
  }
  return 0;
}

}  // namespace

PodFacts PodFactsFromJson(const json& pod) {
  PodFacts f;
  const json meta = pod.value("metadata", json::object());
  f.ns = meta.value("namespace", "");
  f.name = meta.value("name", "");
  f.uid = meta.value("uid", "");
  f.created = meta.value("creationTimestamp", "");
  f.terminating = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  f.tuning_key = workload::TuningKeyOf(pod, workload::WorkloadKind::kPod);
  f.attempt = workload::AttemptOf(meta);
  const std::map<std::string, std::string> annotations = workload::StringMap(meta, "annotations");
  const std::map<std::string, std::string> labels = workload::StringMap(meta, "labels");
  if (auto it = annotations.find(workload::kWorkerCountAnnotation); it != annotations.end())
    f.workers = PositiveInt(it->second, 0);
  if (auto it = annotations.find(kExporterPortAnnotation); it != annotations.end())
    f.exporter_port = PositiveInt(it->second, kDefaultExporterPort);
  if (auto it = annotations.find("graintune.dev/dataset"); it != annotations.end())
    f.dataset = it->second;
  if (auto it = annotations.find(workload::kLearnedFromAnnotation); it != annotations.end())
    f.learned_from = workload::SplitLearnedFrom(it->second);
  if (auto it = annotations.find(workload::kResumeAnnotation); it != annotations.end())
    f.pins_workers = it->second == workload::kPinsWorkers;
  if (auto it = annotations.find(workload::kCheckpointDirAnnotation); it != annotations.end())
    f.checkpoint_dir = it->second;
  if (auto it = annotations.find(workload::kStepsAnnotation); it != annotations.end())
    if (std::optional<double> n = ParseFiniteNumber(it->second); n && *n >= 0 && *n < 1e15)
      f.steps = static_cast<long>(*n);
  f.admission_workers = f.workers;
  f.lap_answer_wait_seconds = LapAnswerWait(pod.value("spec", json::object()));
  if (auto it = annotations.find(workload::kLapValueAnnotation); it != annotations.end()) {
    f.lap_answer = it->second;
    if (const int value = PositiveInt(it->second, 0); value > 0) f.workers = value;
  }
  if (auto it = labels.find("jobset.sigs.k8s.io/jobset-name"); it != labels.end()) {
    f.owner_kind = "JobSet";
    f.owner_name = it->second;
  } else if (auto j = labels.find("batch.kubernetes.io/job-name"); j != labels.end()) {
    f.owner_kind = "Job";
    f.owner_name = j->second;
  } else {
    f.owner_kind = "Pod";
    f.owner_name = f.name;
  }
  const json status = pod.value("status", json::object());
  f.phase = status.value("phase", "Pending");
  f.pod_ip = status.value("podIP", "");
  f.started = status.value("startTime", "");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    if (!status.contains(list) || !status[list].is_array()) continue;
    for (const json& cs : status[list]) {
      if (!cs.is_object()) continue;
      if (TerminatedOom(cs)) f.oom_killed = true;
      if (cs.value("name", json()) == workload::kExporterContainerName)
        if (std::optional<long> step = LastStepOf(cs)) f.last_step = step;
    }
  }
  return f;
}

}  // namespace graintune::op
