#include "workload/tuning_inputs.h"

#include <algorithm>

#include "tuner/quantity.h"
#include "workload/demand_key.h"
#include "workload/identity.h"
#include "workload/pod_templates.h"

namespace graintune::workload {
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

// The demand an earlier workload within `reach` measured fed under the same key, in place of
// the estimate.
void UseLearnedDemand(HistorySource& learned_figures, const LearningReach& reach, TuningInputs& in) {
  if (in.demand.transfer_key.empty()) return;
  std::optional<LearnedDemand> learned = learned_figures.LearnedDemandFor(reach, in.demand.transfer_key);
  if (!learned) return;
  in.demand.tokens_per_second_per_host = learned->tokens_per_second_per_host;
  in.demand.compute_step_seconds = in.demand.tokens_per_step_per_host / learned->tokens_per_second_per_host;
  in.demand.step_estimated = false;
  in.demand.basis = "fed throughput measured by GrainTuning " + learned->grain_tuning +
                    ", same model settings and chips";
  in.learned_from.push_back(learned->grain_tuning);
}

// A CPU host no Node describes (none known, or the cache not synced): the container's own limits
// are all it may use, so they are its shape when both are set.
Result<HostShape> CpuHostFromLimits(std::optional<double> cpu_limit, std::optional<double> memory_limit,
                                    const std::string& why_no_node) {
  if (!cpu_limit || !memory_limit || *cpu_limit <= 0 || *memory_limit <= 0)
    return Status::Error(why_no_node + "; set cpu and memory limits on the trainer's container to size it");
  HostShape shape;
  shape.cpu_cores = *cpu_limit;
  shape.memory_bytes = *memory_limit;
  shape.source = "the container's cpu and memory limits (a CPU host; " + why_no_node + ")";
  return shape;
}

// The host the container may use: the Nodes (or machine type) its pod selects, bounded by its
// limits; a CPU host no Node describes, by its limits alone.
Result<HostShape> HostOf(const nlohmann::json& pod_spec, const nlohmann::json& container,
                         NodeShapeSource& shapes, std::vector<std::string>& warnings) {
  const NodeSelection selection = NodeSelectionOf(pod_spec);
  const std::optional<double> cpu_limit = Limit(container, "cpu", warnings);
  const std::optional<double> memory_limit = Limit(container, "memory", warnings);
  Result<HostShape> host = shapes.ShapeFor(selection);
  if (!host.ok() && !SelectsTpuHost(selection)) host = CpuHostFromLimits(cpu_limit, memory_limit, host.error());
  if (!host.ok()) return host.status();
  return BoundByLimits(*host, cpu_limit, memory_limit);
}

// The chips the trainer feeds per host: its google.com/tpu limit; on a CPU host without one (a
// Pathways head), kChipsAssumedFedFromACpuHost; else 0 (the host's own).
int ChipsFed(const nlohmann::json& container, const HostShape& host, std::vector<std::string>& warnings) {
  if (std::optional<double> chips = Limit(container, "google.com~1tpu", warnings))
    if (*chips >= 1 && *chips <= 64) return static_cast<int>(*chips);
  return host.tpu_chips == 0 ? kChipsAssumedFedFromACpuHost : 0;
}

const std::string kCpuHostDemandNote = "; a CPU host (a Pathways head) feeding chips on other hosts, " +
                                       std::to_string(kChipsAssumedFedFromACpuHost) +
                                       " assumed, so its cpu and memory budgets bound the value";

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
  Result<HostShape> host = HostOf(pod_spec, container, sources.shapes, warnings);
  if (!host.ok()) return host.status();
  in.host = *host;

  WorkloadShape w;
  w.model_name = setting("model_name").value_or("");
  w.per_device_batch_size = number_setting("per_device_batch_size");
  w.max_target_length = number_setting("max_target_length");
  w.chips_per_host = ChipsFed(container, in.host, warnings);
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
  if (in.host.tpu_chips == 0 && w.chips_per_host == kChipsAssumedFedFromACpuHost)
    in.demand.basis += kCpuHostDemandNote;
  // What a measured demand transfers by; an earlier workload with the same key that ran fed
  // measured this one's demand. A step time the job annotates is its owner's word and wins.
  std::map<std::string, std::string> settings;
  if (config_values) settings = *config_values;
  for (const Override& o : overrides.overrides)
    if (std::optional<std::string> v = overrides.Value(o.key)) settings[o.key] = *v;
  in.demand.transfer_key = DemandKey(settings, overrides.config ? overrides.config->path : "",
                                     w.chips_per_host, in.host);
  const LearningReach reach{sources.ns, policy.learn_from};
  if (!annotations.step_seconds && sources.learned_profiles)
    UseLearnedDemand(*sources.learned_profiles, reach, in);

  std::optional<bool> tokenize = annotations.tokenize;
  if (!tokenize) {
    if (std::optional<std::string> t = setting("tokenize_train_data"))
      tokenize = !(*t == "false" || *t == "False" || *t == "0");
  }
  const DatasetKind kind = annotations.dataset_kind.value_or(InferDatasetKind(tokenize));
  std::optional<LearnedDatasetProfile> learned;
  if (annotations.dataset && sources.learned_profiles)
    learned = sources.learned_profiles->LearnedProfile(reach, *annotations.dataset, in.host.machine_type);
  if (learned && learned->profile.kind == kind) {
    in.profile = learned->profile;
    if (annotations.worker_memory_bytes) in.profile.worker_memory_bytes = *annotations.worker_memory_bytes;
    if (std::find(in.learned_from.begin(), in.learned_from.end(), learned->grain_tuning) == in.learned_from.end())
      in.learned_from.push_back(learned->grain_tuning);
  } else {
    in.profile = ProfileWithOverrides(kind, annotations.tokens_per_second_per_worker,
                                      annotations.worker_memory_bytes);
  }
  in.policy = policy;
  return in;
}

Result<TuningInputs> ReadPodTuningInputs(const nlohmann::json& pod, const std::string& ns,
                                         PodInputSources sources,
                                         std::vector<std::string>& warnings) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object())
    return Status::Error("the pod has no spec");
  const nlohmann::json& spec = pod["spec"];
  const nlohmann::json& meta = MetadataOf(pod);
  // The trainer is a regular container; an init container that passes the key too (a smoke
  // run, an AOT compile) runs other settings and only decides when no regular container does.
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (const nlohmann::json& c : spec[list]) {
      if (!c.is_object()) continue;
      const ContainerOverrides overrides = ScanContainer(c);
      if (!overrides.HasKey("grain_worker_count") && !overrides.HasKey("grain_worker_count_eval"))
        continue;
      std::optional<ConfigValues> config;
      if (overrides.config) {
        Result<std::optional<ConfigValues>> loaded =
            LoadMountedConfig(spec, c, overrides.config->path, ns, sources.configmaps);
        if (!loaded.ok()) warnings.push_back("graintune: " + loaded.error());
        else config = *loaded;
      }
      const WorkloadAnnotations annotations =
          ParseWorkloadAnnotations(StringMap(meta, "annotations"), warnings);
      const Policy policy = sources.policies.PolicyFor(ns, StringMap(meta, "labels"));
      return BuildTuningInputs(spec, c, overrides, config ? &*config : nullptr, annotations,
                               policy, InputSources{sources.shapes}, warnings);
    }
  }
  return Status::Error("no container passes grain_worker_count");
}

}  // namespace graintune::workload
