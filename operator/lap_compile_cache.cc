#include "operator/lap_compile_cache.h"

namespace graintune::op {

std::optional<CompileCacheVerdict> CompileCacheOf(const telemetry::StepsDocument& steps) {
  if (!steps.lap || !steps.lap->result || !steps.lap->result->completed) return std::nullopt;
  if (steps.lap->steps.empty() || steps.steps.empty()) return std::nullopt;
  // Both documents' steps rise (ParseStepsDocument), so the front is the first step seen.
  const telemetry::StepSample& lap = steps.lap->steps.front();
  const telemetry::StepSample& trainer = steps.steps.front();
  if (lap.step != trainer.step || lap.step_time_seconds <= 0) return std::nullopt;
  return CompileCacheVerdict{
      .lap_first_step_seconds = lap.step_time_seconds,
      .trainer_first_step_seconds = trainer.step_time_seconds,
      .hit = trainer.step_time_seconds <= kCompileCacheHitShare * lap.step_time_seconds};
}

}  // namespace graintune::op
