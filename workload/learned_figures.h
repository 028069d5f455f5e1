// Learned figures: what earlier workloads measured that a new workload's first pick may use, read
// from GrainTuning objects as the API serves them (the operator writes them; see
// operator/tuning_reconciler.cc):
//   a dataset profile: spec.dataset, spec.datasetKind, status.learnedTokensPerSecondPerWorker,
//     status.learned.{machineType, workerMemoryBytes} (else the trials' worker memory);
//   a demand: status.learned.{demandKey, fedTokensPerSecondPerHost}.
// Only GrainTunings in the workload's reach count (sources.h LearningReach: its own namespace,
// and those its policy shares); among those that match, the newest by
// status.recommendation.decidedAt wins. A GrainTuning with a field of the wrong type or a
// non-positive figure is skipped, never an error.
//
// Pure functions over a visitor of objects (an informer's cache, or the objects of a file); work
// linear in the objects visited, and only the winner is copied. Thread-safety is the visitor's.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workload/sources.h"

namespace graintune::workload {

// Calls its argument once per GrainTuning object.
using GrainTuningVisitor = std::function<void(const std::function<void(const nlohmann::json&)>&)>;

// The newest profile learned for `dataset` on hosts of `machine_type` ("" matches only figures
// measured on unknown hosts) within `reach`; nullopt when none.
std::optional<LearnedDatasetProfile> NewestLearnedProfile(const GrainTuningVisitor& visit,
                                                          const LearningReach& reach,
                                                          const std::string& dataset,
                                                          const std::string& machine_type);

// The newest demand learned under `key` within `reach`; nullopt when none (or `key` is empty).
std::optional<LearnedDemand> NewestLearnedDemand(const GrainTuningVisitor& visit,
                                                 const LearningReach& reach, const std::string& key);

// "namespace/name" of a GrainTuning object.
std::string GrainTuningRef(const nlohmann::json& grain_tuning);

}  // namespace graintune::workload
