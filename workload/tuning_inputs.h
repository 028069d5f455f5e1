// The tuner's inputs for one workload (host, demand, dataset profile, policy), read from its pod
// spec, its MaxText container, its graintune.dev/ annotations and the sources.
//
// Bad individual values (an unparseable per_device_batch_size, a malformed limit) are dropped
// with a warning and the defaults used; only a missing host shape (or a demand that cannot be
// estimated even from defaults) is an error: the caller then leaves -1 for MaxText and warns.
// A pod that asks for no TPU chips and selects no TPU host (a Pathways head on a CPU node pool)
// is sized from the CPU Nodes it can land on, or, when none is known, from its container's cpu
// and memory limits (both needed); its demand is kChipsAssumedFedFromACpuHost chips.
// Never throws.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/decision.h"
#include "workload/container_overrides.h"
#include "workload/mounted_config.h"
#include "workload/sources.h"
#include "workload/workload_annotations.h"

namespace graintune::workload {

// The chips a trainer on a CPU host (a Pathways head: its pod asks for no google.com/tpu) is
// assumed to feed: the chips are on other hosts and their count is not on its pod, so the
// demand is taken large (EstimateDemand's upper bound of one host's chips) and the host's cpu and
// memory budgets, not the demand, bound the value.
inline constexpr int kChipsAssumedFedFromACpuHost = 64;

struct InputSources {
  NodeShapeSource& shapes;
  // Dataset profiles (graintune.dev/dataset) and demands (workload/demand_key.h) learned from
  // earlier workloads in the workload's namespace `ns` and in those its policy's learn_from
  // shares (TuningInputs::learned_from names them); null: not consulted.
  HistorySource* learned_profiles = nullptr;
  std::string ns;
};

// From the parts of a workload the caller has already located: the pod spec that holds
// `container` (MaxText's), the overrides scanned from it, its mounted config (null if none),
// the workload's annotations and the policy in force.
Result<TuningInputs> BuildTuningInputs(const nlohmann::json& pod_spec,
                                       const nlohmann::json& container,
                                       const ContainerOverrides& overrides,
                                       const ConfigValues* config_values,
                                       const WorkloadAnnotations& annotations,
                                       const Policy& policy, InputSources sources,
                                       std::vector<std::string>& warnings);

struct PodInputSources {
  NodeShapeSource& shapes;
  ConfigMapSource& configmaps;
  PolicySource& policies;
};

// The inputs of a Pod graintune tuned, read the way admission read them: the policy in force
// for its labels in `ns` (Policy::object_name says which GrainTunePolicy), MaxText's container
// (the first, init containers first, that passes grain_worker_count or
// grain_worker_count_eval), that container's mounted MaxText config and the pod's annotations.
// Learned dataset profiles and demands are not consulted: the inputs are the workload's own. An error when
// the pod has no such container or no host shape is known.
Result<TuningInputs> ReadPodTuningInputs(const nlohmann::json& pod, const std::string& ns,
                                         PodInputSources sources,
                                         std::vector<std::string>& warnings);

}  // namespace graintune::workload
