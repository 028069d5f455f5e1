#include "tuner/policy.h"

#include <algorithm>

#include "tuner/figures.h"
#include "tuner/practice_lap.h"

namespace graintune {

std::string ToString(Objective objective) {
  return objective == Objective::kFewestWorkers ? "FewestWorkers" : "Throughput";
}

Result<Objective> ParseObjective(const std::string& text) {
  if (text == "Throughput" || text == "throughput") return Objective::kThroughput;
  if (text == "FewestWorkers" || text == "fewest-workers") return Objective::kFewestWorkers;
  return Status::Error("unknown objective '" + text + "' (want Throughput or FewestWorkers)");
}

std::string ToString(Mode mode) {
  switch (mode) {
    case Mode::kInitial: return "Initial";
    case Mode::kOff: return "Off";
    case Mode::kAuto: break;
  }
  return "Auto";
}

Result<Mode> ParseMode(const std::string& text) {
  if (text == "Auto") return Mode::kAuto;
  if (text == "Initial") return Mode::kInitial;
  if (text == "Off") return Mode::kOff;
  return Status::Error("unknown mode '" + text + "' (want Auto, Initial or Off)");
}

std::string ToString(LapPolicy::Mode mode) {
  return mode == LapPolicy::Mode::kTraining ? "Training" : "Off";
}

Result<LapPolicy::Mode> ParseLapMode(const std::string& text) {
  if (text == "Off") return LapPolicy::Mode::kOff;
  if (text == "Training") return LapPolicy::Mode::kTraining;
  return Status::Error("unknown lap mode '" + text + "' (want Off or Training)");
}

bool LearningScope::Includes(const std::string& own, const std::string& measured_in) const {
  return all_namespaces || measured_in == own ||
         std::find(namespaces.begin(), namespaces.end(), measured_in) != namespaces.end();
}

std::string LearningScope::Describe(const std::string& own) const {
  if (all_namespaces) return "every namespace";
  std::string text = own;
  for (const std::string& ns : namespaces)
    if (ns != own) text += ", " + ns;
  return (text == own ? "namespace " : "namespaces ") + text;
}

double DefaultReservedCpu(double host_cpu_cores) { return std::max(4.0, 0.05 * host_cpu_cores); }

double DefaultReservedMemory(double host_memory_bytes) {
  return std::max(16.0 * 1024 * 1024 * 1024, 0.25 * host_memory_bytes);
}

Status Validate(const Policy& policy) {
  if (policy.min_workers < 0) return Status::Error("minWorkers must be >= 0");
  if (policy.max_workers < 1 || policy.max_workers > 4096)
    return Status::Error("maxWorkers must be in [1, 4096]");
  if (policy.min_workers > policy.max_workers)
    return Status::Error("minWorkers " + std::to_string(policy.min_workers) +
                         " is above maxWorkers " + std::to_string(policy.max_workers));
  if (policy.reserved_cpu_cores && *policy.reserved_cpu_cores < 0)
    return Status::Error("reservedCpu must be >= 0");
  if (policy.reserved_memory_bytes && *policy.reserved_memory_bytes < 0)
    return Status::Error("reservedMemory must be >= 0");
  if (!(policy.memory_headroom >= 0 && policy.memory_headroom < 0.9))
    return Status::Error("memoryHeadroom must be in [0, 0.9), got " +
                         Fixed(policy.memory_headroom, 2));
  if (!(policy.safety_factor >= 1.0 && policy.safety_factor <= 4.0))
    return Status::Error("safetyFactor must be in [1, 4], got " + Fixed(policy.safety_factor, 2));
  if (!(policy.noise_tolerance >= 0 && policy.noise_tolerance <= 0.5))
    return Status::Error("noiseTolerance must be in [0, 0.5]");
  if (policy.learn_from.namespaces.size() > kMaxSharedNamespaces)
    return Status::Error("learnFrom.namespaces names more than " +
                         std::to_string(kMaxSharedNamespaces) + " namespaces");
  for (const std::string& ns : policy.learn_from.namespaces)
    if (ns.empty() || ns.size() > 63) return Status::Error("learnFrom.namespaces holds a name that is not a namespace's");
  if (policy.lap.steps && (*policy.lap.steps < kMinLapSteps || *policy.lap.steps > kMaxLapSteps))
    return Status::Error("lap.steps must be in [" + std::to_string(kMinLapSteps) + ", " +
                         std::to_string(kMaxLapSteps) + "]");
  // Ten minutes is about the slowest first compile of a large model on TPU; a lap that cannot
  // finish in an hour costs more than a value it could improve.
  if (policy.lap.timeout_seconds && (*policy.lap.timeout_seconds < 60 || *policy.lap.timeout_seconds > 3600))
    return Status::Error("lap.timeoutSeconds must be in [60, 3600]");
  if (policy.lap.answer_wait_seconds < 10 || policy.lap.answer_wait_seconds > 600)
    return Status::Error("lap.answerWaitSeconds must be in [10, 600]");
  if (!(policy.lap.max_run_share > 0 && policy.lap.max_run_share <= 1))
    return Status::Error("lap.maxRunShare must be in (0, 1]");
  return Status::Ok();
}

}  // namespace graintune
