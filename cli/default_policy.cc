#include "cli/default_policy.h"

#include "workload/graintune_objects.h"

namespace graintune::cli {

nlohmann::json ChartDefaultPolicyObject() {
  return {{"apiVersion", "graintune.dev/v1alpha1"},
          {"kind", "GrainTunePolicy"},
          {"metadata", {{"name", "graintune-cluster-default"}}},
          {"spec",
           {{"priority", 0},
            {"mode", "Auto"},
            {"minWorkers", 1},
            {"maxWorkers", 64},
            {"safetyFactor", 1.25},
            {"memoryHeadroom", 0.1},
            {"objective", "Throughput"},
            {"tuneUnset", false},
            {"startCheck", true}}}};
}

Policy ChartDefaultPolicy() {
  Result<Policy> policy = workload::PolicyFromObject(ChartDefaultPolicyObject());
  return policy.ok() ? *policy : Policy{};  // the object above always parses (tested)
}

}  // namespace graintune::cli
