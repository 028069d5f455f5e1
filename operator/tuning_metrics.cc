#include "operator/tuning_metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <map>
#include <string>

#include "contract/trainer_compile.h"
#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"

namespace graintune::op {

using nlohmann::json;

std::vector<prometheus::MetricFamily> TuningMetricFamilies(const std::vector<json>& grain_tunings) {
  prometheus::Registry registry;
  auto family = [&](const char* name, const char* help) -> prometheus::Family<prometheus::Gauge>& {
    return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
  };
  auto& workers = family("graintune_trial_workers", "grain_worker_count of the attempt");
  auto& step = family("graintune_trial_step_seconds", "Mean steady-state step time of the attempt");
  auto& tflops = family("graintune_trial_tflops_per_device", "TFLOP/s per chip of the attempt");
  auto& data_bound = family("graintune_trial_data_bound", "1 when the attempt's chips waited for data");
  auto& oom = family("graintune_trial_oom_killed", "1 when a pod of the attempt was OOMKilled");
  auto& recommended = family("graintune_recommended_workers",
                             "grain_worker_count recommended for the attempt labelled");
  auto& lap_workers = family("graintune_lap_workers",
                             "grain_worker_count the practice lap gave the run whose first attempt is labelled");
  auto& lap_admission = family("graintune_lap_admission_workers", "grain_worker_count the practice lap ran with");
  auto& lap_seconds = family("graintune_lap_seconds", "Wall time of the longest practice lap of the attempt");
  auto& lap_value = family("graintune_lap_gave_value", "1 when the practice lap gave the run its value, 0 when none");
  auto& lap_cache_hit = family("graintune_lap_trainer_compile_cache_hit",
                               "1 when the trainer found its train step in the JAX cache its practice lap filled, "
                               "0 when it compiled its own");
  for (const json& gt : grain_tunings) {
    if (!gt.is_object()) continue;
    const json meta = gt.value("metadata", json::object());
    if (!meta.is_object()) continue;
    const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
    if (name.empty()) continue;
    auto labels = [&](int attempt) -> std::map<std::string, std::string> {
      return {{"graintuning_namespace", ns}, {"graintuning", name}, {"attempt", std::to_string(attempt)}};
    };
    const TuningHistory history = workload::HistoryFromGrainTuning(gt);
    for (const Trial& t : history.trials) {
      workers.Add(labels(t.attempt)).Set(t.workers);
      oom.Add(labels(t.attempt)).Set(t.oom_killed ? 1 : 0);
      if (t.samples <= 0) continue;
      step.Add(labels(t.attempt)).Set(t.step_seconds_mean);
      data_bound.Add(labels(t.attempt)).Set(IsDataBound(t) ? 1 : 0);
      if (t.tflops_per_device > 0) tflops.Add(labels(t.attempt)).Set(t.tflops_per_device);
    }
    if (history.recommended_workers)
      recommended.Add(labels(history.recommendation_attempt)).Set(*history.recommended_workers);
    if (const std::optional<workload::LapStatus> lap = workload::StatusWithoutListsOf(gt).lap) {
      lap_value.Add(labels(lap->attempt)).Set(lap->workers ? 1 : 0);
      lap_admission.Add(labels(lap->attempt)).Set(lap->admission_workers);
      if (lap->workers) lap_workers.Add(labels(lap->attempt)).Set(*lap->workers);
      if (lap->wall_seconds) lap_seconds.Add(labels(lap->attempt)).Set(*lap->wall_seconds);
      const auto is = [&](contract::TrainerCompile v) {
        return lap->trainer_compile == contract::TrainerCompileStatusName(v);
      };
      if (is(contract::TrainerCompile::kCacheHit) || is(contract::TrainerCompile::kCompiled))
        lap_cache_hit.Add(labels(lap->attempt)).Set(is(contract::TrainerCompile::kCacheHit) ? 1 : 0);
    }
  }
  return registry.Collect();
}

}  // namespace graintune::op
