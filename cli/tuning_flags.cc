#include "cli/tuning_flags.h"

#include "tuner/machine_types.h"
#include "tuner/quantity.h"

namespace graintune::cli {

const std::set<std::string>& TuningFlagNames() {
  static const std::set<std::string> kNames = {
      "machine-type",  "tpu-chips",     "per-device-batch-size",
      "max-target-length", "model-name", "step-seconds",
      "dataset-kind",  "tokens-per-second-per-worker", "worker-memory",
      "min-workers",   "max-workers",   "reserved-cpu",
      "reserved-memory", "safety-factor", "objective",
      "host-cpu",      "host-memory",   "output"};
  return kNames;
}

namespace {

// Copies a parsed optional flag into `out`, or returns its error.
template <typename T, typename U>
Status Take(Result<std::optional<T>> parsed, std::optional<U>& out) {
  if (!parsed.ok()) return parsed.status();
  if (*parsed) out = static_cast<U>(**parsed);
  return Status::Ok();
}

}  // namespace

Result<std::optional<double>> QuantityFlag(const server::Flags& flags, const std::string& name) {
  std::optional<std::string> text = flags.Get(name);
  if (!text) return std::optional<double>();
  Result<double> value = ParseNonNegativeQuantity(*text, "--" + name);
  if (!value.ok()) return value.status();
  return std::optional<double>(*value);
}

Result<TuningSetup> TuningFromFlags(const server::Flags& flags) {
  TuningSetup setup;
  std::optional<double> host_cpu, host_memory;
  for (Status s : {Take(flags.Number("host-cpu"), host_cpu),
                   Take(QuantityFlag(flags, "host-memory"), host_memory)}) {
    if (!s.ok()) return s;
  }
  if (host_cpu.has_value() != host_memory.has_value())
    return Status::Error("--host-cpu and --host-memory go together");
  if (host_cpu && !(*host_cpu > 0 && *host_cpu <= 4096))
    return Status::Error("--host-cpu must be in (0, 4096]");
  if (host_memory && !(*host_memory > 0)) return Status::Error("--host-memory must be > 0");

  std::optional<std::string> machine = flags.Get("machine-type");
  if (machine) {
    std::optional<MachineType> type = FindMachineType(*machine);
    if (!type) {
      std::string known;
      for (const MachineType& t : AllMachineTypes()) known += " " + std::string(t.name);
      return Status::Error("unknown machine type '" + *machine + "'; known:" + known);
    }
    setup.inputs.host = HostShapeOf(*type);
  } else if (!host_cpu) {
    return Status::Error(
        "--machine-type (e.g. ct6e-standard-4t) or --host-cpu with --host-memory is required");
  }
  if (host_cpu) {
    // A host the table does not know (or a measured one): its allocatable figures as given,
    // the chip generation of --machine-type when one was named too.
    setup.inputs.host.cpu_cores = *host_cpu;
    setup.inputs.host.memory_bytes = *host_memory;
    setup.inputs.host.source = "--host-cpu/--host-memory";
  }

  WorkloadShape& w = setup.workload;
  std::optional<int> chips;
  for (Status s : {Take(flags.Integer("tpu-chips"), chips),
                   Take(flags.Number("per-device-batch-size"), w.per_device_batch_size),
                   Take(flags.Number("max-target-length"), w.max_target_length),
                   Take(flags.Number("step-seconds"), w.step_seconds)}) {
    if (!s.ok()) return s;
  }
  if (chips) {
    if (*chips < 1 || *chips > 64) return Status::Error("--tpu-chips must be in [1, 64]");
    w.chips_per_host = *chips;
  }
  if (!machine) {
    if (!chips) return Status::Error("--tpu-chips is required with --host-cpu (chips per host)");
    setup.inputs.host.tpu_chips = *chips;
  }
  w.model_name = flags.Get("model-name").value_or("");
  w.generation = setup.inputs.host.generation;
  Result<Demand> demand = EstimateDemand(w, setup.inputs.host);
  if (!demand.ok()) return demand.status();
  setup.inputs.demand = *demand;

  DatasetKind kind = DatasetKind::kRawText;
  if (std::optional<std::string> k = flags.Get("dataset-kind")) {
    Result<DatasetKind> parsed = ParseDatasetKind(*k);
    if (!parsed.ok()) return Status::Error("--dataset-kind: " + parsed.error());
    kind = *parsed;
  }
  std::optional<double> rate, memory;
  for (Status s : {Take(flags.Number("tokens-per-second-per-worker"), rate),
                   Take(QuantityFlag(flags, "worker-memory"), memory)}) {
    if (!s.ok()) return s;
  }
  if (rate && !(*rate > 0 && *rate < 1e9))
    return Status::Error("--tokens-per-second-per-worker must be in (0, 1e9)");
  if (memory && !(*memory > 0)) return Status::Error("--worker-memory must be > 0");
  setup.inputs.profile = ProfileWithOverrides(kind, rate, memory);

  Policy& policy = setup.inputs.policy;
  std::optional<int> min_workers, max_workers;
  std::optional<double> safety;
  for (Status s : {Take(flags.Integer("min-workers"), min_workers),
                   Take(flags.Integer("max-workers"), max_workers),
                   Take(flags.Number("reserved-cpu"), policy.reserved_cpu_cores),
                   Take(QuantityFlag(flags, "reserved-memory"), policy.reserved_memory_bytes),
                   Take(flags.Number("safety-factor"), safety)}) {
    if (!s.ok()) return s;
  }
  if (min_workers) policy.min_workers = *min_workers;
  if (max_workers) policy.max_workers = *max_workers;
  if (safety) policy.safety_factor = *safety;
  if (std::optional<std::string> objective = flags.Get("objective")) {
    Result<Objective> parsed = ParseObjective(*objective);
    if (!parsed.ok()) return Status::Error("--objective: " + parsed.error());
    policy.objective = *parsed;
  }
  if (Status s = Validate(policy); !s.ok()) return Status::Error("policy: " + s.message());
  return setup;
}

}  // namespace graintune::cli
