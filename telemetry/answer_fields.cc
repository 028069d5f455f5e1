#include "telemetry/answer_fields.h"

#include <cmath>

namespace graintune::telemetry {

using nlohmann::json;

json StepJson(const StepSample& s) {
  json j = {{"step", s.step}, {"step_time_seconds", s.step_time_seconds}};
  if (s.tflops_per_device >= 0) j["tflops_per_device"] = s.tflops_per_device;
  if (s.tokens_per_device_per_second >= 0) j["tokens_per_device_per_second"] = s.tokens_per_device_per_second;
  return j;
}

json ProcessJson(const ProcessFigures& p) {
  return {{"workers", p.workers},
          {"worker_busy_fraction", p.worker_busy_fraction},
          {"worker_memory_bytes", p.worker_memory_bytes},
          {"trainer_memory_bytes", p.trainer_memory_bytes},
          {"trainer_cpu_cores", p.trainer_cpu_cores}};
}

std::vector<StepSample> ReadSteps(const json& steps, size_t max_steps, std::string& problem) {
  std::vector<StepSample> out;
  if (!steps.is_array()) {
    problem = "steps is not a list";
    return out;
  }
  if (steps.size() > max_steps) {
    problem = std::to_string(steps.size()) + " steps in one answer (at most " + std::to_string(max_steps) + ")";
    return out;
  }
  long previous = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps[i];
    const std::string where = "step entry " + std::to_string(i) + ": ";
    if (!s.is_object()) {
      problem = where + "not an object";
      return {};
    }
    StepSample x;
    const double step = BoundedField(s, "step", -1, 0, kMaxStep, problem);
    x.step_time_seconds = BoundedField(s, "step_time_seconds", -1, 0, kMaxStepSeconds, problem);
    x.tflops_per_device = BoundedField(s, "tflops_per_device", -1, -1, kMaxTflopsPerDevice, problem);
    x.tokens_per_device_per_second =
        BoundedField(s, "tokens_per_device_per_second", -1, -1, kMaxTokensPerDevicePerSecond, problem);
    if (problem.empty() && (step < 0 || x.step_time_seconds < 0)) problem = "no step or step_time_seconds";
    if (problem.empty() && step != std::floor(step)) problem = "step is not a whole number";
    x.step = static_cast<long>(step);
    // The exporter keeps one run's steps in order: a step at or below the one before is not its.
    if (problem.empty() && x.step <= previous)
      problem = "step " + std::to_string(x.step) + " after step " + std::to_string(previous);
    if (!problem.empty()) {
      problem = where + problem;
      return {};
    }
    previous = x.step;
    out.push_back(x);
  }
  return out;
}

ProcessFigures ReadProcess(const json& p, std::string& problem) {
  ProcessFigures f;
  if (!p.is_object()) {
    problem = "process: not an object";
    return f;
  }
  f.workers = static_cast<int>(BoundedField(p, "workers", 0, 0, kMaxWorkersSeen, problem));
  f.worker_busy_fraction = BoundedField(p, "worker_busy_fraction", -1, -1, 1, problem);
  f.worker_memory_bytes = BoundedField(p, "worker_memory_bytes", 0, 0, kMaxMemoryBytes, problem);
  f.trainer_memory_bytes = BoundedField(p, "trainer_memory_bytes", 0, 0, kMaxMemoryBytes, problem);
  f.trainer_cpu_cores = BoundedField(p, "trainer_cpu_cores", -1, -1, kMaxCpuCores, problem);
  if (!problem.empty()) problem = "process: " + problem;
  return f;
}

}  // namespace graintune::telemetry
