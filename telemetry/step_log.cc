#include "telemetry/step_log.h"

#include <cmath>

namespace graintune::telemetry {

void StepLog::Restart() {
  std::lock_guard<std::mutex> lock(mu_);
  steps_.clear();
  ++totals_.run;
  totals_.last.reset();
}

void StepLog::Add(const std::vector<StepSample>& samples, int lines, int malformed) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.lines += lines;
  totals_.malformed += malformed;
  for (const StepSample& s : samples) {
    // A step logged again (MaxText re-logs after a restore) replaces the earlier line.
    while (!steps_.empty() && steps_.back().step >= s.step) steps_.pop_back();
    steps_.push_back(s);
    ++totals_.steps;
    totals_.last = s;
    if (steps_.size() > max_steps_) steps_.pop_front();
  }
}

void StepLog::SetProcess(const ProcessFigures& figures) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.process = figures;
}

StepLog::Totals StepLog::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

nlohmann::json StepLog::ToJson(long since) const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json steps = nlohmann::json::array();
  for (const StepSample& s : steps_) {
    if (s.step <= since) continue;
    nlohmann::json j = {{"step", s.step}, {"step_time_seconds", s.step_time_seconds}};
    if (s.tflops_per_device >= 0) j["tflops_per_device"] = s.tflops_per_device;
    if (s.tokens_per_device_per_second >= 0)
      j["tokens_per_device_per_second"] = s.tokens_per_device_per_second;
    steps.push_back(std::move(j));
  }
  nlohmann::json doc = {{"pod_uid", pod_uid_},
                        {"run", totals_.run},
                        {"steps", std::move(steps)},
                        {"lines", totals_.lines},
                        {"malformed_lines", totals_.malformed}};
  if (totals_.process) {
    const ProcessFigures& p = *totals_.process;
    doc["process"] = {{"workers", p.workers},
                      {"worker_busy_fraction", p.worker_busy_fraction},
                      {"worker_memory_bytes", p.worker_memory_bytes},
                      {"trainer_memory_bytes", p.trainer_memory_bytes},
                      {"trainer_cpu_cores", p.trainer_cpu_cores}};
  }
  return doc;
}

namespace {

using nlohmann::json;

// A number field of an answer: absent -> `absent`; present, it must be a finite number within
// [lo, hi], else `problem` says which field and why.
double Bounded(const json& object, const char* field, double absent, double lo, double hi,
               std::string& problem) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return absent;
  if (!it->is_number()) {
    problem = std::string(field) + " is not a number";
    return absent;
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    problem = std::string(field) + " " + it->dump() + " is outside [" + json(lo).dump() + ", " +
              json(hi).dump() + "]";
    return absent;
  }
  return v;
}

}  // namespace

Result<StepsDocument> ParseStepsDocument(const std::string& body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return Status::Error("rejected: the exporter's /steps answer is not a steps document");
  const json& steps = doc["steps"];
  if (steps.size() > kMaxStepsPerAnswer)
    return Status::Error("rejected: " + std::to_string(steps.size()) + " steps in one answer (at most " +
                         std::to_string(kMaxStepsPerAnswer) + ")");
  StepsDocument out;
  std::string problem;
  auto reject = [&](const std::string& where) {
    return Status::Error("rejected: the exporter's /steps answer: " + where + problem);
  };
  if (auto uid = doc.find("pod_uid"); uid != doc.end()) {
    if (!uid->is_string() || uid->get_ref<const std::string&>().size() > 128) {
      problem = "pod_uid is not a pod uid";
      return reject("");
    }
    out.pod_uid = uid->get<std::string>();
  }
  out.run = static_cast<int>(Bounded(doc, "run", 0, 0, 1e9, problem));
  out.malformed_lines = static_cast<long>(Bounded(doc, "malformed_lines", 0, 0, 1e15, problem));
  if (!problem.empty()) return reject("");
  long previous = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps[i];
    const std::string where = "step entry " + std::to_string(i) + ": ";
    if (!s.is_object()) {
      problem = "not an object";
      return reject(where);
    }
    StepSample x;
    const double step = Bounded(s, "step", -1, 0, kMaxStep, problem);
    x.step_time_seconds = Bounded(s, "step_time_seconds", -1, 0, kMaxStepSeconds, problem);
    x.tflops_per_device = Bounded(s, "tflops_per_device", -1, -1, kMaxTflopsPerDevice, problem);
    x.tokens_per_device_per_second =
        Bounded(s, "tokens_per_device_per_second", -1, -1, kMaxTokensPerDevicePerSecond, problem);
    if (problem.empty() && (step < 0 || x.step_time_seconds < 0))
      problem = "no step or step_time_seconds";
    if (problem.empty() && step != std::floor(step)) problem = "step is not a whole number";
    x.step = static_cast<long>(step);
    // The exporter keeps one run's steps in order: a step at or below the one before is not its.
    if (problem.empty() && x.step <= previous)
      problem = "step " + std::to_string(x.step) + " after step " + std::to_string(previous);
    if (!problem.empty()) return reject(where);
    previous = x.step;
    out.steps.push_back(x);
  }
  if (auto p = doc.find("process"); p != doc.end() && p->is_object()) {
    ProcessFigures f;
    f.workers = static_cast<int>(Bounded(*p, "workers", 0, 0, kMaxWorkersSeen, problem));
    f.worker_busy_fraction = Bounded(*p, "worker_busy_fraction", -1, -1, 1, problem);
    f.worker_memory_bytes = Bounded(*p, "worker_memory_bytes", 0, 0, kMaxMemoryBytes, problem);
    f.trainer_memory_bytes = Bounded(*p, "trainer_memory_bytes", 0, 0, kMaxMemoryBytes, problem);
    f.trainer_cpu_cores = Bounded(*p, "trainer_cpu_cores", -1, -1, kMaxCpuCores, problem);
    if (!problem.empty()) return reject("process: ");
    out.process = f;
  }
  return out;
}

}  // namespace graintune::telemetry
