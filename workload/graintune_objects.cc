#include "workload/graintune_objects.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdint>

#include "tuner/quantity.h"

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
  Result<LearningScope> learn_from = LearnFromOf(spec, field("learnFrom"));
  if (!learn_from.ok()) return learn_from.status();
  p.learn_from = std::move(*learn_from);
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

namespace {
// Status figures rounded to what a measurement can tell (and what a table can show).
// Divides by an integral scale so the result is the double nearest the decimal (195.1, not
// 195.10000000000002).
double Round(double v, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(v * scale) / scale;
}
}  // namespace

json TrialToJson(const Trial& t) {
  json j = {{"attempt", t.attempt},
            {"workers", t.workers},
            {"oomKilled", t.oom_killed},
            {"samples", t.samples}};
  if (t.samples > 0) {
    j["stepTimeP50Seconds"] = Round(t.step_seconds_p50, 0.001);
    j["stepTimeP90Seconds"] = Round(t.step_seconds_p90, 0.001);
    j["stepTimeMeanSeconds"] = Round(t.step_seconds_mean, 0.001);
    j["tokensPerSecond"] = Round(t.tokens_per_second_per_host, 1);
    j["stallFraction"] = Round(std::clamp(t.stall_fraction, 0.0, 1.0), 0.001);
    j["dataBound"] = IsDataBound(t);
    if (t.buffered_step_seconds > 0) j["bufferedStepSeconds"] = Round(t.buffered_step_seconds, 0.001);
    if (t.tflops_per_device > 0) j["tflopsPerDevice"] = Round(t.tflops_per_device, 0.1);
  }
  if (t.worker_busy_fraction >= 0) j["workerBusyFraction"] = t.worker_busy_fraction;
  if (t.worker_memory_bytes > 0) j["workerMemoryBytes"] = t.worker_memory_bytes;
  if (t.trainer_memory_bytes > 0) j["trainerMemoryBytes"] = t.trainer_memory_bytes;
  if (t.trainer_cpu_cores >= 0) j["trainerCpuCores"] = t.trainer_cpu_cores;
  return j;
}

Trial TrialFromJson(const json& j) {
  Trial t;
  t.attempt = j.value("attempt", 0);
  t.workers = j.value("workers", 0);
  t.step_seconds_p50 = j.value("stepTimeP50Seconds", 0.0);
  t.step_seconds_p90 = j.value("stepTimeP90Seconds", 0.0);
  t.step_seconds_mean = j.value("stepTimeMeanSeconds", t.step_seconds_p50);
  t.tokens_per_second_per_host = j.value("tokensPerSecond", 0.0);
  t.tflops_per_device = j.value("tflopsPerDevice", 0.0);
  t.stall_fraction = j.value("stallFraction", 0.0);
  t.oom_killed = j.value("oomKilled", false);
  t.samples = j.value("samples", 0);
  t.buffered_step_seconds = j.value("bufferedStepSeconds", 0.0);
  t.worker_busy_fraction = j.value("workerBusyFraction", -1.0);
  t.worker_memory_bytes = j.value("workerMemoryBytes", 0.0);
  t.trainer_memory_bytes = j.value("trainerMemoryBytes", 0.0);
  t.trainer_cpu_cores = j.value("trainerCpuCores", -1.0);
  // The spread is not stored; a stored data-bound verdict is kept through it.
  if (j.value("dataBound", false)) t.step_spread = 2 * kDataBoundSpread;
  return t;
}

std::vector<Trial> TrialsOf(const json& gt) {
  std::vector<Trial> out;
  const json status = gt.value("status", json::object());
  if (auto it = status.find("trials"); it != status.end() && it->is_array())
    for (const json& t : *it)
      if (t.is_object()) out.push_back(TrialFromJson(t));
  return out;
}

namespace {

const json& StatusList(const json& gt, const char* field) {
  static const json kNone = json::array();
  if (!gt.is_object()) return kNone;
  auto status = gt.find("status");
  if (status == gt.end() || !status->is_object()) return kNone;
  auto list = status->find(field);
  return list != status->end() && list->is_array() ? *list : kNone;
}

// One status.runs entry, when it names a directory and a value.
std::optional<std::pair<std::string, RunRecord>> ReadRun(const json& entry) {
  if (!entry.is_object()) return std::nullopt;
  auto dir = entry.find("checkpointDir");
  auto workers = entry.find("workers");
  if (dir == entry.end() || !dir->is_string() || dir->get_ref<const std::string&>().empty() ||
      workers == entry.end() || !workers->is_number_integer() || workers->get<int>() <= 0)
    return std::nullopt;
  RunRecord run;
  run.workers = workers->get<int>();
  auto first = entry.find("firstAttempt");
  if (first != entry.end() && first->is_number_integer()) run.first_attempt = first->get<int>();
  return std::make_pair(dir->get<std::string>(), run);
}

}  // namespace

std::map<std::string, RunRecord> RunsFromList(const json& list) {
  std::map<std::string, RunRecord> runs;
  if (!list.is_array()) return runs;
  for (const json& entry : list)
    if (auto run = ReadRun(entry)) runs.insert(*run);
  return runs;
}

std::map<std::string, RunRecord> RunsOf(const json& gt) { return RunsFromList(StatusList(gt, "runs")); }

std::optional<RunRecord> RunOf(const json& gt, const std::string& checkpoint_dir) {
  for (const json& entry : StatusList(gt, "runs"))
    if (auto run = ReadRun(entry); run && run->first == checkpoint_dir) return run->second;
  return std::nullopt;
}

json RunToJson(const std::string& checkpoint_dir, const RunRecord& run) {
  return {{"checkpointDir", checkpoint_dir}, {"workers", run.workers}, {"firstAttempt", run.first_attempt}};
}

TuningHistory HistoryFromGrainTuning(const json& gt) {
  TuningHistory h;
  h.runs = RunsOf(gt);
  const json next = gt.value("status", json::object()).value("nextRun", json::object());
  if (next.is_object() && next.contains("workers") && next["workers"].is_number_integer() &&
      next["workers"].get<int>() > 0) {
    h.next_run_workers = next["workers"].get<int>();
    if (next.contains("reason") && next["reason"].is_string()) h.next_run_reason = next["reason"];
  }
  h.trials = TrialsOf(gt);
  const json spec = gt.value("spec", json::object());
  h.mode = spec.value("mode", "Auto");
  const json rec = gt.value("status", json::object()).value("recommendation", json::object());
  if (rec.contains("workers") && rec["workers"].is_number_integer() && rec["workers"].get<int>() > 0)
    h.recommended_workers = rec["workers"].get<int>();
  h.recommendation_attempt = rec.value("attempt", 0);
  h.recommendation_reason = rec.value("reason", "");
  const json ended = gt.value("status", json::object()).value("endedAttempts", json::array());
  if (ended.is_array())
    for (const json& a : ended)
      if (a.is_number_integer() && a.get<int>() >= 0) h.ended_attempts.insert(a.get<int>());
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
