#include "operator/maxtext_metrics.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace graintune::op {
namespace {

// A finite, non-negative number at `key`; -1 when absent; error when present but bad.
Result<double> Number(const nlohmann::json& obj, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Status::Error(std::string("no \"") + key + "\"");
    return -1.0;
  }
  if (!it->is_number()) return Status::Error(std::string("\"") + key + "\" is not a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return Status::Error(std::string("\"") + key + "\" is out of range");
  return v;
}

}  // namespace

Result<StepSample> ParseMetricsLine(std::string_view line) {
  const nlohmann::json obj = nlohmann::json::parse(line, nullptr, false);
  if (obj.is_discarded() || !obj.is_object()) return Status::Error("not a JSON object");
  Result<double> step = Number(obj, "step", true);
  if (!step.ok()) return step.status();
  Result<double> time = Number(obj, "perf/step_time_seconds", true);
  if (!time.ok()) return time.status();
  Result<double> tflops = Number(obj, "perf/per_device_tflops_per_sec", false);
  if (!tflops.ok()) return tflops.status();
  Result<double> tokens = Number(obj, "perf/per_device_tokens_per_sec", false);
  if (!tokens.ok()) return tokens.status();
  if (*step != std::floor(*step)) return Status::Error("\"step\" is not an integer");
  // A whole double is exact up to 2^53; past it (and past long's range) no real step lies.
  if (*step > 9007199254740992.0) return Status::Error("\"step\" is out of range");
  return StepSample{static_cast<long>(*step), *time, *tflops, *tokens};
}

}  // namespace graintune::op
