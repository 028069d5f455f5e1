#include "telemetry/maxtext_metrics.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace graintune::telemetry {
namespace {

// `line` with Python's bare NaN, Infinity and -Infinity outside strings replaced by null
// (same length or shorter), so a strict JSON parser reads the rest of the line. Linear.
std::string WithNonFiniteAsNull(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < line.size()) out.push_back(line[++i]);
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    const std::string_view rest = line.substr(i);
    size_t word = 0;
    if (rest.starts_with("NaN")) word = 3;
    else if (rest.starts_with("Infinity")) word = 8;
    else if (rest.starts_with("-Infinity")) word = 9;
    if (word > 0) {
      out += "null";
      i += word - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// A finite, non-negative number at `key`; -1 when absent or null (NaN, +-Infinity); error when
// present but not a number or negative.
Result<double> Number(const nlohmann::json& obj, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Status::Error(std::string("no finite \"") + key + "\"");
    return -1.0;
  }
  if (!it->is_number()) return Status::Error(std::string("\"") + key + "\" is not a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return Status::Error(std::string("\"") + key + "\" is out of range");
  return v;
}

// MaxText's eval and running-eval lines: "eval/..." keys and no step time.
bool IsEvalLine(const nlohmann::json& obj) {
  if (obj.contains("perf/step_time_seconds")) return false;
  for (const auto& [key, value] : obj.items())
    if (key.starts_with("eval/")) return true;
  return false;
}

}  // namespace

Result<MetricsLine> ParseMetricsLine(std::string_view line) {
  const nlohmann::json obj = nlohmann::json::parse(WithNonFiniteAsNull(line), nullptr, false);
  if (obj.is_discarded() || !obj.is_object()) return Status::Error("not a JSON object");
  MetricsLine out;
  if (auto it = obj.find("run_name"); it != obj.end() && it->is_string()) out.run_name = *it;
  Result<double> step = Number(obj, "step", true);
  if (!step.ok()) return step.status();
  if (*step != std::floor(*step)) return Status::Error("\"step\" is not an integer");
  // A whole double is exact up to 2^53; past it (and past long's range) no real step lies.
  if (*step > 9007199254740992.0) return Status::Error("\"step\" is out of range");
  if (IsEvalLine(obj)) return out;
  Result<double> time = Number(obj, "perf/step_time_seconds", true);
  if (!time.ok()) return time.status();
  Result<double> tflops = Number(obj, "perf/per_device_tflops_per_sec", false);
  Result<double> tokens = Number(obj, "perf/per_device_tokens_per_sec", false);
  if (!tflops.ok()) return tflops.status();
  if (!tokens.ok()) return tokens.status();
  out.sample = StepSample{static_cast<long>(*step), *time, *tflops, *tokens};
  return out;
}

}  // namespace graintune::telemetry
