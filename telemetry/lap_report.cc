#include "telemetry/lap_report.h"

#include "telemetry/answer_fields.h"

namespace graintune::telemetry {

using nlohmann::json;

json ToJson(const LapResult& r) {
  json out = {{"completed", r.completed}, {"outcome", r.outcome}, {"wall_seconds", r.wall_seconds},
              {"steps", r.steps}, {"workers", r.workers}};
  if (r.trainer_compile) {
    out["trainer_compile"] = TrainerCompileName(r.trainer_compile->verdict);
    if (!r.trainer_compile->why.empty()) out["trainer_compile_why"] = r.trainer_compile->why;
  } else if (r.trainer_compile_watching) {
    out["trainer_compile"] = kTrainerCompileWatching;
  }
  return out;
}

json ToJson(const LapReport& report) {
  json steps = json::array();
  for (const StepSample& s : report.steps) steps.push_back(StepJson(s));
  json out = {{"steps", std::move(steps)}};
  if (report.process) out["process"] = ProcessJson(*report.process);
  if (report.result) {
    out["result"] = ToJson(*report.result);
    out["result_age_seconds"] = report.result_age_seconds;
  }
  return out;
}

namespace {

Result<LapResult> ReadResult(const json& r) {
  if (!r.is_object()) return Status::Error("not an object");
  LapResult out;
  const auto completed = r.find("completed");
  if (completed == r.end() || !completed->is_boolean()) return Status::Error("completed is not true or false");
  out.completed = completed->get<bool>();
  if (const auto outcome = r.find("outcome"); outcome != r.end()) {
    if (!outcome->is_string() || outcome->get_ref<const std::string&>().size() > kMaxLapOutcomeBytes)
      return Status::Error("outcome is not a short text");
    out.outcome = outcome->get<std::string>();
  }
  if (const auto compile = r.find("trainer_compile"); compile != r.end() && *compile == kTrainerCompileWatching) {
    out.trainer_compile_watching = true;
  } else if (compile != r.end()) {
    const std::optional<TrainerCompile> verdict =
        compile->is_string() ? ParseTrainerCompile(compile->get_ref<const std::string&>()) : std::nullopt;
    if (!verdict)
      return Status::Error("trainer_compile is not \"cache hit\", \"compiled\", \"unknown\" or \"watching\"");
    out.trainer_compile = TrainerCompileVerdict{.verdict = *verdict};
    if (const auto why = r.find("trainer_compile_why"); why != r.end()) {
      if (!why->is_string() || why->get_ref<const std::string&>().size() > kMaxLapOutcomeBytes)
        return Status::Error("trainer_compile_why is not a short text");
      out.trainer_compile->why = why->get<std::string>();
    }
  }
  std::string problem;
  out.wall_seconds = BoundedField(r, "wall_seconds", 0, 0, kMaxStepSeconds, problem);
  out.steps = static_cast<int>(BoundedField(r, "steps", 0, 0, 1e6, problem));
  out.workers = static_cast<int>(BoundedField(r, "workers", 0, 0, kMaxWorkersSeen, problem));
  if (!problem.empty()) return Status::Error(problem);
  return out;
}

}  // namespace

Result<LapResult> ParseLapResult(const std::string& text) {
  const json r = json::parse(text, nullptr, false);
  if (r.is_discarded()) return Status::Error("the lap's result is not JSON");
  Result<LapResult> out = ReadResult(r);
  if (!out.ok()) return Status::Error("the lap's result: " + out.error());
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
    Result<LapResult> result = ReadResult(*r);
    if (!result.ok()) return reject("result: " + result.error());
    out.result = std::move(result).value();
    out.result_age_seconds = BoundedField(lap, "result_age_seconds", -1, 0, 1e9, problem);
    if (!problem.empty()) return reject(problem);
  }
  return out;
}

}  // namespace graintune::telemetry
