// Who an object is to graintune: the tuning key it learns under and the attempt it belongs to,
// read from its metadata alone. Pure functions over the object; a missing or malformed
// metadata block reads as empty (key from nothing is "", attempt 0), never an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workload/pod_templates.h"

namespace graintune::workload {

// The object's metadata block, or one shared empty object when it has none.
const nlohmann::json& MetadataOf(const nlohmann::json& object);

// metadata.<field> when it is a string, else "".
std::string MetadataString(const nlohmann::json& object, const std::string& field);

// The attempt an object belongs to: the larger of JobSet's jobset.sigs.k8s.io/restart-attempt
// label and graintune's graintune.dev/attempt annotation (graintune numbers a new run of an
// ended attempt past the label), else 0. `metadata` is the object's metadata.
int AttemptOf(const nlohmann::json& metadata);

// The tuning key: graintune.dev/tuning-key, else the owning JobSet, else the Job, else the
// object's own name (or generateName).
std::string TuningKeyOf(const nlohmann::json& object, WorkloadKind kind);

}  // namespace graintune::workload
