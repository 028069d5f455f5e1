#include "cli/tuning_flags.h"

#include "cli/default_policy.h"
#include "tuner/machine_types.h"
#include "tuner/model_catalog.h"
#include "tuner/quantity.h"

namespace graintune::cli {

const std::vector<FlagSpec>& TuningFlagSpecs() {
  static const std::vector<FlagSpec> kSpecs = {
      {"machine-type", 0, "TYPE", "",
       "GKE TPU machine type (ct6e-standard-4t) or slice name (v6e-32, v5litepod-16, v5p-128)"},
      {"host-cpu", 0, "CORES", "", "allocatable cpu of a host the table lacks (with --host-memory)"},
      {"host-memory", 0, "QUANTITY", "", "allocatable memory of that host, e.g. 700Gi"},
      {"tpu-chips", 0, "N", "the machine type's chips per host", "TPU chips the trainer uses per host"},
      {"model-name", 0, "NAME", "MaxText base.yml's model (~1B)", "MaxText model_name, e.g. llama3-8b"},
      {"per-device-batch-size", 0, "B", "12 (MaxText base.yml)", "MaxText per_device_batch_size"},
      {"max-target-length", 0, "L", "2048 (MaxText base.yml)", "MaxText max_target_length"},
      {"step-seconds", 0, "S", "estimated from model FLOPs at 40% MFU", "known compute step time"},
      {"dataset-kind", 0, "KIND", "raw-text", "array-record | raw-text | heavy-decode"},
      {"tokens-per-second-per-worker", 0, "X", "the dataset kind's profile",
       "measured tokens one Grain worker yields per second"},
      {"worker-memory", 0, "QUANTITY", "the dataset kind's profile",
       "resident memory of one Grain worker, e.g. 2Gi"},
      {"min-workers", 0, "N", "1 (the chart's default policy)", "policy: fewest workers"},
      {"max-workers", 0, "N", "64 (the chart's default policy)", "policy: most workers"},
      {"reserved-cpu", 0, "CORES", "max(4, 5% of the host)", "policy: cpu left to the trainer"},
      {"reserved-memory", 0, "QUANTITY", "max(16Gi, 25% of the host)",
       "policy: memory left to the trainer"},
      {"safety-factor", 0, "F", "1.25", "policy: over-provisioning of the computed need"},
      {"objective", 0, "NAME", "Throughput", "policy: Throughput | FewestWorkers"},
  };
  return kSpecs;
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

Result<MachineType> MachineTypeOrSlice(const std::string& text, std::optional<SliceShape>* slice) {
  if (LooksLikeSliceName(text)) {
    Result<SliceShape> parsed = ParseSliceName(text);
    if (!parsed.ok()) return Status::Error("--machine-type: " + parsed.error());
    if (slice) *slice = *parsed;
    return parsed->machine;
  }
  std::optional<MachineType> type = FindMachineType(text);
  if (!type) {
    std::string known;
    for (const MachineType& t : AllMachineTypes()) known += " " + std::string(t.name);
    return Status::Error("unknown machine type '" + text + "'; known:" + known +
                         " (or a slice name such as v6e-32)");
  }
  return *type;
}

namespace {

// The host: --machine-type (or a slice), or --host-cpu with --host-memory; `machine_type` is the
// type named, if any.
Status HostFromFlags(const server::Flags& flags, TuningSetup& setup,
                     std::optional<MachineType>& machine_type) {
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

  if (std::optional<std::string> machine = flags.Get("machine-type")) {
    Result<MachineType> type = MachineTypeOrSlice(*machine, &setup.slice);
    if (!type.ok()) return type.status();
    machine_type = *type;
    setup.inputs.host = HostShapeOf(*machine_type);
  } else if (!host_cpu) {
    return Status::Error(
        "--machine-type (e.g. ct6e-standard-4t or v6e-32) or --host-cpu with --host-memory is "
        "required");
  }
  if (host_cpu) {
    // A host the table does not know (or a measured one): its allocatable figures as given,
    // the chip generation of --machine-type when one was named too.
    setup.inputs.host.cpu_cores = *host_cpu;
    setup.inputs.host.memory_bytes = *host_memory;
    setup.inputs.host.source = "--host-cpu/--host-memory";
  }
  return Status::Ok();
}

// The workload's MaxText settings and chips, and the demand estimated from them.
Status DemandFromFlags(const server::Flags& flags, const std::optional<MachineType>& machine_type,
                       TuningSetup& setup) {
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
    if (machine_type && *chips != machine_type->tpu_chips)
      setup.warnings.push_back(
          "--tpu-chips " + std::to_string(*chips) + " but " + std::string(machine_type->name) +
          " hosts have " + std::to_string(machine_type->tpu_chips) + " chips" +
          (*chips > machine_type->tpu_chips ? "; no pod on one can use that many"
                                            : "; the estimate is for the chips given"));
  }
  if (!machine_type) {
    if (!chips) return Status::Error("--tpu-chips is required with --host-cpu (chips per host)");
    setup.inputs.host.tpu_chips = *chips;
  }
  w.model_name = flags.Get("model-name").value_or("");
  if (!w.model_name.empty() && !FindModel(w.model_name)) {
    std::string known;
    for (const ModelFigures& m : AllModels()) known += (known.empty() ? "" : ", ") + std::string(m.name);
    setup.warnings.push_back("unknown model '" + w.model_name +
                             "': the demand is estimated as for MaxText's default model (~1B "
                             "parameters); pass --step-seconds for a real figure. Known: " + known);
  }
  w.generation = setup.inputs.host.generation;
  Result<Demand> demand = EstimateDemand(w, setup.inputs.host);
  if (!demand.ok()) return demand.status();
  setup.inputs.demand = *demand;
  return Status::Ok();
}

// The dataset's per-worker profile: its kind, and the measured rate and memory if given.
Status ProfileFromFlags(const server::Flags& flags, TuningSetup& setup) {
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
  return Status::Ok();
}

// The chart's default policy with the policy flags on top.
Status PolicyFromFlags(const server::Flags& flags, Policy& policy) {
  policy = ChartDefaultPolicy();
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
  return Status::Ok();
}

}  // namespace

Result<TuningSetup> TuningFromFlags(const server::Flags& flags) {
  TuningSetup setup;
  std::optional<MachineType> machine_type;
  if (Status s = HostFromFlags(flags, setup, machine_type); !s.ok()) return s;
  if (Status s = DemandFromFlags(flags, machine_type, setup); !s.ok()) return s;
  if (Status s = ProfileFromFlags(flags, setup); !s.ok()) return s;
  if (Status s = PolicyFromFlags(flags, setup.inputs.policy); !s.ok()) return s;
  return setup;
}

}  // namespace graintune::cli
