// The flags `graintune recommend` and `graintune simulate` share, turned into tuner values.
//
// --machine-type T or --host-cpu C --host-memory Q (a host the table lacks; with both, the
// table's figures are replaced), --tpu-chips N (required without --machine-type), --per-device-batch-size B, --max-target-length L,
// --model-name M, --step-seconds S, --dataset-kind K, --tokens-per-second-per-worker X,
// --worker-memory Q, and policy bounds --min-workers, --max-workers, --reserved-cpu,
// --reserved-memory, --safety-factor, --objective. Every bad value is an error naming its flag.
#pragma once

#include <set>
#include <string>

#include "server/flags.h"
#include "tuner/decision.h"

namespace graintune::cli {

const std::set<std::string>& TuningFlagNames();

struct TuningSetup {
  TuningInputs inputs;
  WorkloadShape workload;
};

Result<TuningSetup> TuningFromFlags(const server::Flags& flags);

// A Kubernetes quantity flag ("2Gi", "500m"): absent -> nullopt; malformed -> an error naming
// the flag.
Result<std::optional<double>> QuantityFlag(const server::Flags& flags, const std::string& name);

}  // namespace graintune::cli
