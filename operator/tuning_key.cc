#include "operator/tuning_key.h"

#include "operator/pod_facts.h"

namespace graintune::op {

std::optional<TuningKey> TuningKeyOfPod(const nlohmann::json& pod) {
  const PodFacts f = PodFactsFromJson(pod);
  if (f.workers <= 0 || f.tuning_key.empty()) return std::nullopt;
  return TuningKey{f.ns, f.tuning_key};
}

std::optional<TuningKey> TuningKeyOfGrainTuning(const nlohmann::json& grain_tuning) {
  if (!grain_tuning.is_object()) return std::nullopt;
  const nlohmann::json meta = grain_tuning.value("metadata", nlohmann::json::object());
  const nlohmann::json spec = grain_tuning.value("spec", nlohmann::json::object());
  if (!meta.is_object() || !spec.is_object()) return std::nullopt;
  const nlohmann::json ns = meta.value("namespace", nlohmann::json());
  const nlohmann::json key = spec.value("tuningKey", nlohmann::json());
  if (!ns.is_string() || !key.is_string() || key.get<std::string>().empty()) return std::nullopt;
  return TuningKey{ns.get<std::string>(), key.get<std::string>()};
}

}  // namespace graintune::op
