// Demand: how many tokens per second one host's trainer consumes when the chips are fed.
//
// Built from the job's own MaxText settings (WorkloadShape). What is missing falls back to
// MaxText's base.yml defaults (per_device_batch_size 12, max_target_length 2048, model
// "default"), so an estimate always exists; `basis` says which figures were assumed.
// The compute step time is estimated from FLOPs at an assumed utilisation that is deliberately
// on the optimistic side: over-estimating demand costs a few idle workers, under-estimating it
// starves the chips. A measured or annotated step time replaces the estimate.
#pragma once

#include <optional>
#include <string>

#include "tuner/host_shape.h"
#include "base/status.h"

namespace graintune {

// The MaxText settings of one workload that shape its demand.
struct WorkloadShape {
  std::string model_name;                     // MaxText model_name; empty = base.yml default
  std::optional<double> per_device_batch_size;
  std::optional<double> max_target_length;
  int chips_per_host = 0;                     // google.com/tpu limit; 0 = take the host's
  ChipGeneration generation = ChipGeneration::kUnknown;  // kUnknown = take the host's
  std::optional<double> step_seconds;         // known compute step time (annotation/measured)
};

struct Demand {
  double tokens_per_step_per_host = 0;
  double compute_step_seconds = 0;
  double tokens_per_second_per_host = 0;
  // Bytes of one batch as Grain yields it to the host (6 int32 arrays per token:
  // inputs, targets and their positions and segmentations).
  double element_bytes = 0;
  std::string basis;  // how the figures were obtained, for the Decision's reason
  bool step_estimated = false;  // the compute step is the FLOPs estimate at kAssumedMfu
  // The settings and hosts this demand follows from, as a key (workload/demand_key.h): a fed
  // run's measured throughput is the demand of every workload with the same key. Empty: it
  // transfers to no other workload.
  std::string transfer_key;
};

// MaxText's base.yml defaults.
inline constexpr double kMaxTextDefaultBatch = 12.0;
inline constexpr double kMaxTextDefaultSequence = 2048.0;
// Model FLOPs utilisation assumed when estimating the compute step (optimistic on purpose).
inline constexpr double kAssumedMfu = 0.40;
// The high end of the utilisation MaxText reaches on TPUs: a value kept for a whole run sizes
// an estimated demand for it (Decide), as a starved run cannot correct itself.
inline constexpr double kHighEndMfu = 0.60;

// Errors: negative or absurd batch/sequence/step figures, no chips known.
Result<Demand> EstimateDemand(const WorkloadShape& workload, const HostShape& host);

}  // namespace graintune
