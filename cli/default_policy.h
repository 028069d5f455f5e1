// The policy the CLI assumes when it is given none: the GrainTunePolicy the Helm chart
// installs by default (charts/graintune values `defaultPolicy`), so `graintune recommend` and
// `graintune explain` answer as a freshly installed cluster would. A unit test checks these
// figures against the chart's values.yaml.
#pragma once

#include <nlohmann/json.hpp>

#include "tuner/policy.h"

namespace graintune::cli {

// The chart's default GrainTunePolicy object (as `helm template` renders it, release "graintune").
nlohmann::json ChartDefaultPolicyObject();

// The same, as a tuner Policy.
Policy ChartDefaultPolicy();

}  // namespace graintune::cli
