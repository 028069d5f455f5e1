// graintune recommend: the first pick for a host, workload and dataset, with its reason; with
// --history FILE (cli/history_file.h), the pick the across-restart logic makes after those
// attempts instead.
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/history_file.h"
#include "cli/tuning_flags.h"
#include "tuner/figures.h"
#include "tuner/grain_baseline.h"

namespace graintune::cli {

int RunRecommend(const Args& args, std::ostream& out, std::ostream& err) {
  std::set<std::string> names = TuningFlagNames();
  names.insert("history");
  Result<server::Flags> flags = server::Flags::Parse(args, names);
  if (!flags.ok()) {
    err << "graintune recommend: " << flags.error() << "\n";
    return 2;
  }
  Result<TuningSetup> setup = TuningFromFlags(*flags);
  if (!setup.ok()) {
    err << "graintune recommend: " << setup.error() << "\n";
    return 2;
  }
  const TuningInputs& in = setup->inputs;
  std::vector<Trial> trials;
  if (std::optional<std::string> history = flags->Get("history")) {
    Result<std::vector<Trial>> read = ReadHistoryFile(*history, in.demand.tokens_per_step_per_host);
    if (!read.ok()) {
      err << "graintune recommend: --history " << read.error() << "\n";
      return 2;
    }
    trials = *read;
  }
  const Decision d = Decide(in, trials);
  const int grain_pick = GrainPickPerformanceWorkers(in.demand.element_bytes, in.host.cpu_cores);

  if (flags->Get("output").value_or("text") == "json") {
    nlohmann::json j = {
        {"workers", d.workers},
        {"per_worker_buffer", d.per_worker_buffer},
        {"phase", ToString(d.phase)},
        {"reason", d.reason},
        {"needed_workers", d.needed_workers},
        {"budgets", {{"cpu", d.budgets.cpu}, {"memory", d.budgets.memory},
                     {"ceiling", d.budgets.ceiling},
                     {"per_worker_memory_bytes", d.budgets.per_worker_memory_bytes}}},
        {"host", {{"machine_type", in.host.machine_type}, {"cpu_cores", in.host.cpu_cores},
                  {"memory_bytes", in.host.memory_bytes}, {"tpu_chips", in.host.tpu_chips},
                  {"generation", ToString(in.host.generation)}}},
        {"demand", {{"tokens_per_step_per_host", in.demand.tokens_per_step_per_host},
                    {"compute_step_seconds", in.demand.compute_step_seconds},
                    {"tokens_per_second_per_host", in.demand.tokens_per_second_per_host},
                    {"basis", in.demand.basis}}},
        {"profile", {{"kind", ToString(in.profile.kind)},
                     {"tokens_per_second_per_worker", in.profile.tokens_per_second_per_worker},
                     {"worker_memory_bytes", in.profile.worker_memory_bytes},
                     {"source", in.profile.source}}},
        {"baselines", {{"maxtext_default", kMaxTextDefaultWorkers},
                       {"maxtext_auto_grain_pick", grain_pick}}},
    };
    out << j.dump(2) << "\n";
    return 0;
  }
  out << "grain_worker_count=" << d.workers << "\n"
      << "  host:    " << in.host.source << ": " << Fixed(in.host.cpu_cores, 1) << " cpu, "
      << Bytes(in.host.memory_bytes) << ", " << in.host.tpu_chips << " chips\n"
      << "  reason:  " << d.reason << "\n"
      << "  MaxText default would use " << kMaxTextDefaultWorkers
      << "; MaxText's -1 (Grain pick_performance_config, ram_budget_mb 1024) " << grain_pick
      << "\n";
  return 0;
}

}  // namespace graintune::cli
