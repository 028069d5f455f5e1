#include "operator/step_log.h"

namespace graintune::op {

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

Result<StepsDocument> ParseStepsDocument(const std::string& body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return Status::Error("the exporter's /steps answer is not a steps document");
  StepsDocument out;
  try {
    out.pod_uid = doc.value("pod_uid", "");
    out.run = doc.value("run", 0);
    out.malformed_lines = doc.value("malformed_lines", 0L);
    for (const nlohmann::json& s : doc["steps"]) {
      StepSample x;
      x.step = s.at("step").get<long>();
      x.step_time_seconds = s.at("step_time_seconds").get<double>();
      x.tflops_per_device = s.value("tflops_per_device", -1.0);
      x.tokens_per_device_per_second = s.value("tokens_per_device_per_second", -1.0);
      out.steps.push_back(x);
    }
    if (doc.contains("process") && doc["process"].is_object()) {
      const nlohmann::json& p = doc["process"];
      out.process = ProcessFigures{p.value("workers", 0), p.value("worker_busy_fraction", -1.0),
                                   p.value("worker_memory_bytes", 0.0),
                                   p.value("trainer_memory_bytes", 0.0),
                                   p.value("trainer_cpu_cores", -1.0)};
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("the exporter's /steps answer: ") + e.what());
  }
  return out;
}

}  // namespace graintune::op
