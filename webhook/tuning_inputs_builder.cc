#include "webhook/tuning_inputs_builder.h"

#include "tuner/quantity.h"
#include "webhook/pod_templates.h"

namespace graintune::webhook {
namespace {

std::optional<double> Limit(const nlohmann::json& container, const std::string& resource,
                            std::vector<std::string>& warnings) {
  const nlohmann::json::json_pointer p("/resources/limits/" + resource);
  if (!container.contains(p)) return std::nullopt;
  const nlohmann::json& v = container.at(p);
  const std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
  Result<double> q = ParseNonNegativeQuantity(text, "limit " + resource);
  if (!q.ok()) {
    warnings.push_back("graintune: ignoring " + q.error());
    return std::nullopt;
  }
  return *q;
}

}  // namespace

Result<TuningInputs> BuildTuningInputs(const nlohmann::json& pod_spec,
                                       const nlohmann::json& container,
                                       const ContainerOverrides& overrides,
                                       const ConfigValues* config_values,
                                       const WorkloadAnnotations& annotations,
                                       const Policy& policy, InputSources sources,
                                       std::vector<std::string>& warnings) {
  // A MaxText setting: the command line / env first, then the mounted YAML.
  auto setting = [&](const std::string& key) -> std::optional<std::string> {
    if (std::optional<std::string> v = overrides.Value(key)) return v;
    if (config_values) {
      auto it = config_values->find(key);
      if (it != config_values->end()) return it->second;
    }
    return std::nullopt;
  };
  auto number_setting = [&](const std::string& key) -> std::optional<double> {
    std::optional<std::string> text = setting(key);
    if (!text) return std::nullopt;
    std::optional<double> n = ParseFiniteNumber(*text);
    if (!n) warnings.push_back("graintune: ignoring " + key + "=" + *text + ": not a number");
    return n;
  };

  TuningInputs in;
  Result<HostShape> host = sources.shapes.ShapeFor(NodeSelectionOf(pod_spec));
  if (!host.ok()) return host.status();
  in.host = BoundByLimits(*host, Limit(container, "cpu", warnings),
                          Limit(container, "memory", warnings));

  WorkloadShape w;
  w.model_name = setting("model_name").value_or("");
  w.per_device_batch_size = number_setting("per_device_batch_size");
  w.max_target_length = number_setting("max_target_length");
  if (std::optional<double> chips = Limit(container, "google.com~1tpu", warnings)) {
    if (*chips >= 1 && *chips <= 64) w.chips_per_host = static_cast<int>(*chips);
  }
  w.generation = in.host.generation;
  w.step_seconds = annotations.step_seconds;
  Result<Demand> demand = EstimateDemand(w, in.host);
  if (!demand.ok()) {
    warnings.push_back("graintune: " + demand.error() + "; using MaxText defaults");
    w.per_device_batch_size.reset();
    w.max_target_length.reset();
    w.step_seconds.reset();
    demand = EstimateDemand(w, in.host);
    if (!demand.ok()) return demand.status();
  }
  in.demand = *demand;

  std::optional<bool> tokenize = annotations.tokenize;
  if (!tokenize) {
    if (std::optional<std::string> t = setting("tokenize_train_data"))
      tokenize = !(*t == "false" || *t == "False" || *t == "0");
  }
  const DatasetKind kind = annotations.dataset_kind.value_or(InferDatasetKind(tokenize));
  std::optional<DatasetProfile> learned;
  if (annotations.dataset) learned = sources.history.LearnedProfile(*annotations.dataset);
  if (learned && learned->kind == kind) {
    in.profile = *learned;
    if (annotations.worker_memory_bytes) in.profile.worker_memory_bytes = *annotations.worker_memory_bytes;
  } else {
    in.profile = ProfileWithOverrides(kind, annotations.tokens_per_second_per_worker,
                                      annotations.worker_memory_bytes);
  }
  in.policy = policy;
  return in;
}

}  // namespace graintune::webhook
