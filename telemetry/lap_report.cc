#include "telemetry/lap_report.h"

#include "telemetry/answer_fields.h"

namespace graintune::telemetry {

using nlohmann::json;

json ToJson(const LapReport& report) {
  json steps = json::array();
  for (const StepSample& s : report.steps) steps.push_back(StepJson(s));
  json out = {{"steps", std::move(steps)}};
  if (report.process) out["process"] = ProcessJson(*report.process);
  if (report.result) {
    out["result"] = contract::ToJson(*report.result);
    out["result_age_seconds"] = report.result_age_seconds;
  }
  return out;
}

Result<LapReport> ParseLapReport(const json& lap) {
  auto reject = [](const std::string& why) {
    return Status::Error("rejected: the exporter's /steps answer: lap: " + why);
  };
  if (!lap.is_object()) return reject("not an object");
  LapReport out;
  std::string problem;
  if (const auto steps = lap.find("steps"); steps != lap.end()) {
    out.steps = ReadSteps(*steps, kMaxLapStepsReported, problem);
    if (!problem.empty()) return reject(problem);
  }
  if (const auto p = lap.find("process"); p != lap.end() && !p->is_null()) {
    out.process = ReadProcess(*p, problem);
    if (!problem.empty()) return reject(problem);
  }
  if (const auto r = lap.find("result"); r != lap.end() && !r->is_null()) {
    Result<LapResult> result = contract::ReadLapResult(*r);
    if (!result.ok()) return reject("result: " + result.error());
    out.result = std::move(result).value();
    out.result_age_seconds = BoundedField(lap, "result_age_seconds", -1, 0, 1e9, problem);
    if (!problem.empty()) return reject(problem);
  }
  return out;
}

}  // namespace graintune::telemetry
