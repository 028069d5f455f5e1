// The flags `graintune recommend` and `graintune simulate` share, turned into tuner values.
//
// The host: --machine-type T (a GKE TPU machine type such as ct6e-standard-4t, or a slice name
// such as v6e-32, v5litepod-16 or v5p-128, mapped to its hosts' machine type, chips per host
// and host count), or --host-cpu C with --host-memory Q for a host the table lacks (with a
// machine type too, its figures are replaced). The workload: --tpu-chips, --model-name,
// --per-device-batch-size, --max-target-length, --step-seconds. The dataset: --dataset-kind,
// --tokens-per-second-per-worker, --worker-memory. The policy (defaults: the Helm chart's
// default GrainTunePolicy, cli/default_policy.h): --min-workers, --max-workers, --reserved-cpu,
// --reserved-memory, --safety-factor, --objective.
// Every bad value is an error naming its flag; doubtful but usable input (a model graintune
// does not know, a chip count the machine type does not have) is a warning in the setup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "server/flags.h"
#include "tuner/decision.h"
#include "tuner/slice_names.h"

namespace graintune::cli {

const std::vector<FlagSpec>& TuningFlagSpecs();

struct TuningSetup {
  TuningInputs inputs;
  WorkloadShape workload;
  std::optional<SliceShape> slice;    // when --machine-type named a slice
  std::vector<std::string> warnings;  // for stderr and the JSON output
};

Result<TuningSetup> TuningFromFlags(const server::Flags& flags);

// --machine-type's value: a GKE machine type, or a slice name (then `*slice` is set, when given).
// Errors name the flag and list the known machine types.
Result<MachineType> MachineTypeOrSlice(const std::string& text, std::optional<SliceShape>* slice);

// A Kubernetes quantity flag ("2Gi", "500m"): absent -> nullopt; malformed -> an error naming
// the flag.
Result<std::optional<double>> QuantityFlag(const server::Flags& flags, const std::string& name);

}  // namespace graintune::cli
