#include "operator/tuning_key.h"

#include "operator/pod_facts.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {

std::optional<TuningKey> TuningKeyOfPod(const nlohmann::json& pod) {
  const PodFacts f = PodFactsFromJson(pod);
  if (f.workers <= 0 || f.tuning_key.empty()) return std::nullopt;
  return TuningKey{f.ns, f.tuning_key};
}

std::optional<TuningKey> TuningKeyOfGrainTuning(const nlohmann::json& grain_tuning) {
  if (!grain_tuning.is_object()) return std::nullopt;
  const nlohmann::json meta = grain_tuning.value("metadata", nlohmann::json::object());
  if (!meta.is_object()) return std::nullopt;
  const nlohmann::json ns = meta.value("namespace", nlohmann::json());
  std::string key = workload::SpecOf(grain_tuning).tuning_key;
  if (!ns.is_string() || key.empty()) return std::nullopt;
  return TuningKey{ns.get<std::string>(), std::move(key)};
}

}  // namespace graintune::op
