// The unit the operator reconciles: one tuning key in one namespace (one GrainTuning), and how
// the objects the operator watches name it. Pure functions over the objects; a pod or
// GrainTuning that names no key gives nullopt (nothing to reconcile for it).
#pragma once

#include <compare>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace graintune::op {

struct TuningKey {
  std::string ns;
  std::string key;  // the workload's tuning key (spec.tuningKey of its GrainTuning)

  auto operator<=>(const TuningKey&) const = default;
  // "namespace/key", for log lines and messages only.
  std::string ToString() const { return ns + "/" + key; }
};

// The key of a pod graintune manages: its tuning key, when the pod got a worker count.
std::optional<TuningKey> TuningKeyOfPod(const nlohmann::json& pod);

// The key a GrainTuning records (spec.tuningKey in its namespace).
std::optional<TuningKey> TuningKeyOfGrainTuning(const nlohmann::json& grain_tuning);

}  // namespace graintune::op
