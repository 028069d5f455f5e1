#include "contract/lap_result.h"

#include <cmath>

#include "contract/bounded_json.h"

namespace graintune::contract {

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
  if (r.trainer_workers) {
    out["trainer_workers"] = *r.trainer_workers;
    out["trainer_value_why"] = r.trainer_value_why;
  }
  return out;
}

namespace {

// "trainer_compile" and its why into `out`; an empty text when they are well formed.
std::string ReadTrainerCompile(const json& r, LapResult& out) {
  const auto compile = r.find("trainer_compile");
  if (compile == r.end()) return "";
  if (*compile == kTrainerCompileWatching) {
    out.trainer_compile_watching = true;
    return "";
  }
  const std::optional<TrainerCompile> verdict =
      compile->is_string() ? ParseTrainerCompile(compile->get_ref<const std::string&>()) : std::nullopt;
  if (!verdict) return R"(trainer_compile is not "cache hit", "compiled", "unknown" or "watching")";
  out.trainer_compile = TrainerCompileVerdict{.verdict = *verdict};
  if (const auto why = r.find("trainer_compile_why"); why != r.end()) {
    if (!why->is_string() || why->get_ref<const std::string&>().size() > kMaxLapOutcomeBytes)
      return "trainer_compile_why is not a short text";
    out.trainer_compile->why = why->get<std::string>();
  }
  return "";
}

}  // namespace

Result<LapResult> ReadLapResult(const json& r) {
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
  std::string problem = ReadTrainerCompile(r, out);
  if (!problem.empty()) return Status::Error(problem);
  out.wall_seconds = BoundedField(r, "wall_seconds", 0, 0, kMaxLapWallSeconds, problem);
  out.steps = static_cast<int>(BoundedField(r, "steps", 0, 0, kMaxLapSteps, problem));
  out.workers = static_cast<int>(BoundedField(r, "workers", 0, 0, kMaxLapWorkers, problem));
  if (const double started = BoundedField(r, "trainer_workers", -1, 1, kMaxLapWorkers, problem); started >= 1) {
    if (started != std::floor(started)) return Status::Error("trainer_workers is not a whole number");
    out.trainer_workers = static_cast<int>(started);
    const auto why = r.find("trainer_value_why");
    if (why == r.end() || !why->is_string() || why->get_ref<const std::string&>().size() > kMaxLapOutcomeBytes)
      return Status::Error("trainer_value_why is not a short text beside trainer_workers");
    out.trainer_value_why = why->get<std::string>();
  }
  if (!problem.empty()) return Status::Error(problem);
  return out;
}

Result<LapResult> ParseLapResult(const std::string& text) {
  const json r = json::parse(text, nullptr, false);
  if (r.is_discarded()) return Status::Error("the lap's result is not JSON");
  Result<LapResult> out = ReadLapResult(r);
  if (!out.ok()) return Status::Error("the lap's result: " + out.error());
  return out;
}

}  // namespace graintune::contract
