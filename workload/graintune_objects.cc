#include "workload/graintune_objects.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdint>

#include "tuner/quantity.h"
#include "workload/grain_tuning_status.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// spec.learnFrom: {namespaces: [names], allNamespaces: bool}; absent: the workload's own only.
Result<LearningScope> LearnFromOf(const json& spec, const std::string& field) {
  LearningScope scope;
  auto it = spec.find("learnFrom");
  if (it == spec.end() || it->is_null()) return scope;
  if (!it->is_object()) return Status::Error(field + " is not an object");
  if (auto all = it->find("allNamespaces"); all != it->end()) {
    if (!all->is_boolean()) return Status::Error(field + ".allNamespaces is not true or false");
    scope.all_namespaces = all->get<bool>();
  }
  if (auto names = it->find("namespaces"); names != it->end()) {
    if (!names->is_array()) return Status::Error(field + ".namespaces is not a list");
    if (names->size() > kMaxSharedNamespaces)
      return Status::Error(field + ".namespaces names more than " +
                           std::to_string(kMaxSharedNamespaces) + " namespaces");
    for (const json& n : *names) {
      if (!n.is_string()) return Status::Error(field + ".namespaces holds " + n.dump() + ", not a name");
      scope.namespaces.push_back(n.get<std::string>());
    }
  }
  return scope;
}

// spec.lap: {mode: Off|Training, steps, timeoutSeconds, answerWaitSeconds, maxRunShare}; absent:
// no lap.
Result<LapPolicy> LapOf(const json& spec, const std::string& field) {
  LapPolicy lap;
  auto it = spec.find("lap");
  if (it == spec.end() || it->is_null()) return lap;
  if (!it->is_object()) return Status::Error(field + " is not an object");
  if (auto mode = it->find("mode"); mode != it->end()) {
    Result<LapPolicy::Mode> parsed = ParseLapMode(mode->is_string() ? mode->get<std::string>() : mode->dump());
    if (!parsed.ok()) return Status::Error(field + ".mode: " + parsed.error());
    lap.mode = *parsed;
  }
  for (const char* key : {"timeoutSeconds", "answerWaitSeconds"}) {
    if (auto v = it->find(key); v != it->end()) {
      if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1000000)
        return Status::Error(field + "." + key + " is not a whole number of seconds");
      if (std::string_view(key) == "timeoutSeconds") lap.timeout_seconds = v->get<int>();
      else lap.answer_wait_seconds = v->get<int>();
    }
  }
  if (auto v = it->find("steps"); v != it->end()) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1000000)
      return Status::Error(field + ".steps is not a whole number");
    lap.steps = v->get<int>();
  }
  if (auto v = it->find("maxRunShare"); v != it->end()) {
    if (!v->is_number()) return Status::Error(field + ".maxRunShare is not a number");
    lap.max_run_share = v->get<double>();  // its range: ValidatePolicy
  }
  return lap;
}

}  // namespace

bool SelectorMatches(const json& selector, const std::map<std::string, std::string>& labels) {
  if (!selector.is_object()) return true;
  if (auto ml = selector.find("matchLabels"); ml != selector.end() && ml->is_object()) {
    for (const auto& [k, v] : ml->items()) {
      auto it = labels.find(k);
      if (it == labels.end() || !v.is_string() || it->second != v.get<std::string>()) return false;
    }
  }
  if (auto me = selector.find("matchExpressions"); me != selector.end() && me->is_array()) {
    for (const json& e : *me) {
      const std::string key = Str(e, "key"), op = Str(e, "operator");
      std::vector<std::string> values;
      if (auto v = e.find("values"); v != e.end() && v->is_array())
        for (const json& x : *v)
          if (x.is_string()) values.push_back(x.get<std::string>());
      auto it = labels.find(key);
      const bool has = it != labels.end();
      const bool in = has && std::find(values.begin(), values.end(), it->second) != values.end();
      if (op == "In" && !in) return false;
      if (op == "NotIn" && in) return false;
      if (op == "Exists" && !has) return false;
      if (op == "DoesNotExist" && has) return false;
      if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
    }
  }
  return true;
}

Result<Policy> PolicyFromObject(const json& object) {
  const json spec = object.value("spec", json::object());
  const std::string name = object.value("metadata", json::object()).value("name", "");
  Policy p;
  p.name = "GrainTunePolicy " + name;
  p.object_name = name;
  auto field = [&](const char* f) { return "GrainTunePolicy " + name + " spec." + f; };
  if (spec.contains("mode")) {
    Result<Mode> m = ParseMode(Str(spec, "mode"));
    if (!m.ok()) return Status::Error(field("mode") + ": " + m.error());
    p.mode = *m;
  }
  if (spec.contains("objective")) {
    Result<Objective> o = ParseObjective(Str(spec, "objective"));
    if (!o.ok()) return Status::Error(field("objective") + ": " + o.error());
    p.objective = *o;
  }
  auto integer = [&](const char* key, int& out) -> Status {
    if (!spec.contains(key)) return Status::Ok();
    if (!spec[key].is_number_integer()) return Status::Error(field(key) + " is not an integer");
    out = spec[key].get<int>();
    return Status::Ok();
  };
  auto number = [&](const char* key, double& out) -> Status {
    if (!spec.contains(key)) return Status::Ok();
    if (!spec[key].is_number()) return Status::Error(field(key) + " is not a number");
    out = spec[key].get<double>();
    return Status::Ok();
  };
  auto quantity = [&](const char* key, std::optional<double>& out) -> Status {
    if (!spec.contains(key)) return Status::Ok();
    const std::string text = spec[key].is_string() ? spec[key].get<std::string>() : spec[key].dump();
    Result<double> q = ParseNonNegativeQuantity(text, field(key));
    if (!q.ok()) return q.status();
    out = *q;
    return Status::Ok();
  };
  for (Status s : {integer("minWorkers", p.min_workers), integer("maxWorkers", p.max_workers),
                   number("memoryHeadroom", p.memory_headroom),
                   number("safetyFactor", p.safety_factor),
                   number("noiseTolerance", p.noise_tolerance),
                   quantity("reservedCpu", p.reserved_cpu_cores),
                   quantity("reservedMemory", p.reserved_memory_bytes)})
    if (!s.ok()) return s;
  p.tune_unset = spec.value("tuneUnset", false);
  if (spec.contains("startCheck")) {
    if (!spec["startCheck"].is_boolean()) return Status::Error(field("startCheck") + " is not true or false");
    p.start_check = spec["startCheck"].get<bool>();
  }
  Result<LearningScope> learn_from = LearnFromOf(spec, field("learnFrom"));
  if (!learn_from.ok()) return learn_from.status();
  p.learn_from = std::move(*learn_from);
  Result<LapPolicy> lap = LapOf(spec, field("lap"));
  if (!lap.ok()) return lap.status();
  p.lap = *lap;
  if (Status s = Validate(p); !s.ok()) return Status::Error(p.name + ": " + s.message());
  return p;
}

std::optional<json> PolicyCovering(const std::vector<json>& policies,
                                   const std::map<std::string, std::string>& namespace_labels,
                                   const std::map<std::string, std::string>& workload_labels) {
  const json* best = nullptr;
  auto priority = [](const json& p) { return p.value("spec", json::object()).value("priority", 0); };
  auto name = [](const json& p) { return p.value("metadata", json::object()).value("name", ""); };
  for (const json& p : policies) {
    const json spec = p.value("spec", json::object());
    if (!SelectorMatches(spec.value("namespaceSelector", json()), namespace_labels) ||
        !SelectorMatches(spec.value("selector", json()), workload_labels))
      continue;
    if (!best || priority(p) > priority(*best) ||
        (priority(p) == priority(*best) && name(p) < name(*best)))
      best = &p;
  }
  if (!best) return std::nullopt;
  return *best;
}

json TrialToJson(const Trial& t) { return ToJson(TrialStatusOf(t)); }

std::vector<Trial> TrialsOf(const json& gt) {
  std::vector<Trial> out;
  for (const TrialStatus& t : StatusOf(gt).trials) out.push_back(TrialOf(t));
  return out;
}

std::map<std::string, RunRecord> RunsOf(const json& gt) {
  return RunRecordsOf(StatusWithoutTrialsOf(gt).runs);
}

std::optional<RunRecord> RunOf(const json& gt, const std::string& checkpoint_dir) {
  const std::map<std::string, RunRecord> runs = RunsOf(gt);
  auto it = runs.find(checkpoint_dir);
  if (it == runs.end()) return std::nullopt;
  return it->second;
}

TuningHistory HistoryFromGrainTuning(const json& gt) {
  const GrainTuningStatus status = StatusOf(gt);
  TuningHistory h;
  h.runs = RunRecordsOf(status.runs);
  if (status.next_run && status.next_run->workers.value_or(0) > 0) {
    h.next_run_workers = *status.next_run->workers;
    if (status.next_run->reason) h.next_run_reason = *status.next_run->reason;
  }
  for (const TrialStatus& t : status.trials) h.trials.push_back(TrialOf(t));
  h.mode = SpecOf(gt).mode.value_or("Auto");
  if (const std::optional<RecommendationStatus>& rec = status.recommendation) {
    if (rec->workers.value_or(0) > 0) h.recommended_workers = *rec->workers;
    h.recommendation_attempt = rec->attempt.value_or(0);
    h.recommendation_reason = rec->reason.value_or("");
  }
  for (int a : status.ended_attempts)
    if (a >= 0) h.ended_attempts.insert(a);
  return h;
}

Result<StaticPolicies> StaticPolicies::FromObjects(std::vector<json> objects) {
  StaticPolicies out;
  for (json& o : objects) {
    if (!o.is_object() || o.value("kind", "") != "GrainTunePolicy") continue;
    Result<Policy> p = PolicyFromObject(o);
    if (!p.ok()) return p.status();
    out.policies_.push_back(std::move(o));
  }
  return out;
}

Policy StaticPolicies::PolicyFor(const std::string& ns,
                                 const std::map<std::string, std::string>& labels) {
  if (std::optional<json> chosen =
          PolicyCovering(policies_, {{"kubernetes.io/metadata.name", ns}}, labels))
    return *PolicyFromObject(*chosen);
  return Policy{};
}

std::string GrainTuningName(const std::string& key) {
  auto valid_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'; };
  const bool valid = !key.empty() && key.size() <= 253 &&
                     std::all_of(key.begin(), key.end(), valid_char) &&
                     std::isalnum(static_cast<unsigned char>(key.front())) &&
                     std::isalnum(static_cast<unsigned char>(key.back()));
  if (valid) return key;
  std::string clean;
  for (char c : key) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    clean += valid_char(l) ? l : '-';
  }
  while (!clean.empty() && !std::isalnum(static_cast<unsigned char>(clean.front()))) clean.erase(0, 1);
  if (clean.size() > 240) clean.resize(240);
  while (!clean.empty() && !std::isalnum(static_cast<unsigned char>(clean.back()))) clean.pop_back();
  // FNV-1a: stable across builds, so the webhook and the operator always agree on the name.
  uint32_t h = 2166136261u;
  for (unsigned char c : key) h = (h ^ c) * 16777619u;
  char hash[12];
  std::snprintf(hash, sizeof(hash), "%08x", h);
  return (clean.empty() ? "key" : clean) + "-" + hash;
}

}  // namespace graintune::workload
