// What `graintune status` shows of a GrainTuning: one row per trial (attempt, workers, steady
// step time, TFLOP/s per chip, data-bound, verdict) and the table a person reads.
//
// The verdict compares a trial with the other measured trials of the same GrainTuning (same
// workload, so a shorter step is more throughput): "best so far" for the fastest with the
// fewest workers, "as fast as attempt N, more workers" within the noise tolerance of the
// fastest, "P% slower than attempt N" beyond it, "OOM-killed", or "no steady steps" for an
// attempt without a steady-state measurement. Pure functions over objects as the API server
// serves them (checked against the CRD's schema); no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/policy.h"
#include "tuner/trial.h"

namespace graintune::cli {

struct TrialRow {
  int attempt = 0;
  int workers = 0;
  std::optional<double> step_seconds;       // mean steady-state step
  std::optional<double> tflops_per_device;  // when MaxText reported it
  std::optional<bool> data_bound;           // unknown without a steady-state measurement
  std::string verdict;
};

// One row per trial, in the trials' order. `noise_tolerance`: step-time differences below
// this share count as equal (the policy's noiseTolerance).
std::vector<TrialRow> TrialRows(const std::vector<Trial>& trials,
                                double noise_tolerance = Policy{}.noise_tolerance);

// Aligned columns under a header, kubectl style; "-" for what is unknown. Ends with a newline.
std::string TrialTable(const std::vector<TrialRow>& rows);

// A row for -o json / yaml: attempt, workers, stepSeconds, tflopsPerDevice, dataBound (null
// when unknown), verdict.
nlohmann::json TrialRowJson(const TrialRow& row);

// A GrainTuning as `graintune status` reports it with -o json / yaml: namespace, name,
// tuningKey, demandKey (spec's, else status.learned's; "" when none), learnedFrom (the
// GrainTunings, "namespace/name", whose learned figures set its first pick), phase, recommendation {workers, attempt, reason} (null when none), nextRun
// {workers, reason} (null when none), runs [{checkpointDir, workers, firstAttempt}], conditions
// {ValuePinned, EndedEarly: message} (those that are True), trials (rows).
nlohmann::json TuningStatusJson(const nlohmann::json& grain_tuning);
// Its text: "GrainTuning NS/NAME (key K): PHASE", the recommendation and its reason, the next
// run's value, the demand key and what it learned from, the runs that keep their value, a
// pinned or ended-early condition, and the trial table (or "no trials yet").
std::string TuningStatusText(const nlohmann::json& grain_tuning);

}  // namespace graintune::cli
