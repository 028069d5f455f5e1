// graintune recommend: the first pick for a host, workload and dataset, with its reason; with
// --history FILE (cli/history_file.h), the pick the across-restart logic makes after those
// attempts instead; with --runs FILE, the value for the next run of a workload whose runs keep
// their value (checkpointed), from earlier runs' trials (an empty array: the first run's).
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/history_file.h"
#include "cli/tuning_flags.h"
#include "tuner/figures.h"
#include "tuner/grain_baseline.h"

namespace graintune::cli {

const CommandSpec& RecommendSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec spec;
    spec.name = "recommend";
    spec.summary = "The grain_worker_count graintune picks for a host, workload and dataset.";
    spec.usage = "--machine-type TYPE [flags]";
    spec.description =
        "Prints the first attempt's value with its reason, beside MaxText's default and its -1\n"
        "(Grain's pick). With --history, the value after those attempts instead, as the operator\n"
        "would recommend it on the next restart. With --runs, the value for the next run of a\n"
        "workload whose runs keep their value (MaxText checkpoints Grain's iterator): decided\n"
        "for a whole run, from what earlier runs measured (\"[]\" for the first run).";
    spec.flags = TuningFlagSpecs();
    spec.flags.push_back({"history", 0, "FILE", "",
                          "earlier attempts, oldest first: a JSON array of {\"workers\": N, \"step_seconds\": [...]} or {\"workers\": N, \"oom_killed\": true}"});
    spec.flags.push_back({"runs", 0, "FILE", "",
                          "earlier runs of a workload whose runs keep their value, oldest first, one entry per run in --history's format"});
    spec.examples =
        "  graintune recommend --machine-type v6e-32 --model-name llama3-8b \\\n"
        "      --per-device-batch-size 2 --max-target-length 8192\n"
        "  graintune recommend --machine-type ct5p-hightpu-4t --dataset-kind array-record -o json\n"
        "  graintune recommend --machine-type v6e-32 --model-name llama3-8b --runs runs.json\n";
    return spec;
  }();
  return kSpec;
}

int RunRecommend(const Args& args, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(RecommendSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(RecommendSpec(), line, out, err)) return *code;
  const server::Flags* flags = &line->flags;
  Result<TuningSetup> setup = TuningFromFlags(*flags);
  if (!setup.ok()) {
    err << "graintune recommend: " << setup.error() << "\n";
    return 2;
  }
  for (const std::string& w : setup->warnings) err << "graintune recommend: warning: " << w << "\n";
  TuningInputs in = setup->inputs;
  std::vector<Trial> trials;
  const std::optional<std::string> history = flags->Get("history");
  const std::optional<std::string> runs = flags->Get("runs");
  if (history && runs) {
    err << "graintune recommend: --history (attempts of one run) and --runs (earlier runs) exclude each other\n";
    return 2;
  }
  if (history || runs) {
    Result<std::vector<Trial>> read =
        ReadHistoryFile(history ? *history : *runs, in.demand.tokens_per_step_per_host);
    if (!read.ok()) {
      err << "graintune recommend: " << (history ? "--history " : "--runs ") << read.error() << "\n";
      return 2;
    }
    trials = *read;
  }
  if (runs) in.lifetime = ValueLifetime::kRun;
  const Decision d = Decide(in, trials);
  const int grain_pick = GrainPickPerformanceWorkers(in.demand.element_bytes, in.host.cpu_cores);

  if (line->output != OutputFormat::kText) {
    nlohmann::json j = {
        {"workers", d.workers},
        {"value_for", runs ? "next run" : history ? "next attempt" : "first attempt"},
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
        {"warnings", setup->warnings},
    };
    if (setup->slice)
      j["slice"] = {{"name", setup->slice->name}, {"hosts", setup->slice->hosts},
                    {"chips", setup->slice->chips},
                    {"machine_type", std::string(setup->slice->machine.name)}};
    WriteStructured(j, line->output, out);
    return 0;
  }
  out << "grain_worker_count=" << d.workers
      << (runs ? "   (the next run's value, kept for the whole run)" : "") << "\n"
      << "  host:    " << in.host.source << ": " << Fixed(in.host.cpu_cores, 1) << " cpu, "
      << Bytes(in.host.memory_bytes) << ", " << in.host.tpu_chips << " chips"
      << (setup->slice ? " (one of the " + std::to_string(setup->slice->hosts) + " hosts of " +
                             setup->slice->name + ")"
                       : std::string())
      << "\n"
      << "  reason:  " << d.reason << "\n"
      << "  MaxText default would use " << kMaxTextDefaultWorkers
      << "; MaxText's -1 (Grain pick_performance_config, ram_budget_mb 1024) " << grain_pick
      << "\n";
  return 0;
}

}  // namespace graintune::cli
