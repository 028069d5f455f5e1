// Builds the tuner's inputs for one workload from its pod spec, its MaxText container, the
// workload's graintune.dev/ annotations and the sources. Bad individual values (an unparseable
// per_device_batch_size, a malformed limit) are dropped with a warning and the defaults used;
// only a missing host shape is an error (the webhook then leaves -1 for MaxText and warns).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/decision.h"
#include "webhook/container_overrides.h"
#include "webhook/mounted_config.h"
#include "webhook/sources.h"
#include "webhook/workload_annotations.h"

namespace graintune::webhook {

struct InputSources {
  NodeShapeSource& shapes;
  HistorySource& history;
};

Result<TuningInputs> BuildTuningInputs(const nlohmann::json& pod_spec,
                                       const nlohmann::json& container,
                                       const ContainerOverrides& overrides,
                                       const ConfigValues* config_values,
                                       const WorkloadAnnotations& annotations,
                                       const Policy& policy, InputSources sources,
                                       std::vector<std::string>& warnings);

}  // namespace graintune::webhook
