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
#include "tuner/practice_lap.h"

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
        "for a whole run, from what earlier runs measured (\"[]\" for the first run). With\n"
        "--lap, the value a run keeps from its practice lap: a few steps of the job's own\n"
        "command on its hosts before the trainer starts (admission's value when the lap failed\n"
        "or a host sent no figures).";
    spec.flags = TuningFlagSpecs();
    spec.flags.push_back({"history", 0, "FILE", "",
                          "earlier attempts, oldest first: a JSON array of {\"workers\": N, \"step_seconds\": [...]} or {\"workers\": N, \"oom_killed\": true}"});
    spec.flags.push_back({"runs", 0, "FILE", "",
                          "earlier runs of a workload whose runs keep their value, oldest first, one entry per run in --history's format"});
    spec.flags.push_back({"lap", 0, "FILE", "",
                          "a practice lap's figures: one entry in --history's format (with step_seconds, worker_busy_fraction, worker_memory_bytes), or an array of them, one per host"});
    spec.flags.push_back({"lap-kind", 0, "KIND", "training",
                          "training (MaxText's train) | data-only (its standalone data loader: one batch per step)"});
    spec.examples =
        "  graintune recommend --machine-type v6e-32 --model-name llama3-8b \\\n"
        "      --per-device-batch-size 2 --max-target-length 8192\n"
        "  graintune recommend --machine-type ct5p-hightpu-4t --dataset-kind array-record -o json\n"
        "  graintune recommend --machine-type v6e-32 --model-name llama3-8b --runs runs.json\n"
        "  graintune recommend --machine-type v6e-32 --model-name llama3-8b --lap lap.json\n";
    return spec;
  }();
  return kSpec;
}

namespace {

// What recommend decided, for which value, and what the lap (if any) showed.
struct Recommendation {
  Decision decision;
  std::string value_for;  // "first attempt" | "next attempt" | "next run" | "run"
  std::string note;       // after the value in the text output
  nlohmann::json lap;     // null without --lap
};

Result<LapKind> LapKindFlag(const server::Flags& flags) {
  const std::string kind = flags.Get("lap-kind").value_or("training");
  if (kind == "training") return LapKind::kTraining;
  if (kind == "data-only") return LapKind::kDataOnly;
  return Status::Error("--lap-kind must be training or data-only, not '" + kind + "'");
}

// The run's value from the lap figures in `path`; admission's value for the run when the lap
// gives none (that is a result, not an error). Errors: the file or --lap-kind.
Result<Recommendation> FromLap(TuningInputs in, const std::string& path, const server::Flags& flags) {
  const Result<LapKind> kind = LapKindFlag(flags);
  if (!kind.ok()) return kind.status();
  const Result<std::vector<Trial>> hosts =
      ReadTrialsFile(path, in.demand.tokens_per_step_per_host, ParseLap);
  if (!hosts.ok()) return Status::Error("--lap " + hosts.error());
  std::vector<LapFigures> laps;
  for (const Trial& t : *hosts) laps.push_back(LapFiguresOf(t, *kind));
  in.lifetime = ValueLifetime::kRun;
  const Decision admission = Decide(in, {});
  const Result<Decision> lap = DecideFromLaps(in, laps, static_cast<int>(laps.size()));
  Recommendation r;
  r.value_for = "run";
  r.decision = lap.ok() ? *lap : admission;
  r.note = lap.ok() ? "   (the run's value, from its practice lap; kept for the whole run)"
                    : "   (admission's value for the run: " + lap.error() + ")";
  r.lap = {{"kind", ToString(*kind)}, {"hosts", laps.size()}, {"gave_value", lap.ok()},
           {"admission_workers", admission.workers}};
  if (!lap.ok()) r.lap["no_value_reason"] = lap.error();
  return r;
}

// --history, --runs or neither: the next attempt's, the next run's or the first attempt's value.
Result<Recommendation> FromTrials(TuningInputs in, const server::Flags& flags) {
  const std::optional<std::string> history = flags.Get("history");
  const std::optional<std::string> runs = flags.Get("runs");
  std::vector<Trial> trials;
  if (history || runs) {
    Result<std::vector<Trial>> read =
        ReadHistoryFile(history ? *history : *runs, in.demand.tokens_per_step_per_host);
    if (!read.ok()) return Status::Error((history ? "--history " : "--runs ") + read.error());
    trials = *read;
  }
  if (runs) in.lifetime = ValueLifetime::kRun;
  Recommendation r;
  r.decision = Decide(in, trials);
  r.value_for = runs ? "next run" : history ? "next attempt" : "first attempt";
  if (runs) r.note = "   (the next run's value, kept for the whole run)";
  return r;
}

nlohmann::json RecommendJson(const TuningSetup& setup, const Recommendation& r, int grain_pick) {
  const TuningInputs& in = setup.inputs;
  const Decision& d = r.decision;
  nlohmann::json j = {
      {"workers", d.workers},
      {"value_for", r.value_for},
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
      {"warnings", setup.warnings},
  };
  if (!r.lap.is_null()) j["lap"] = r.lap;
  if (setup.slice)
    j["slice"] = {{"name", setup.slice->name}, {"hosts", setup.slice->hosts},
                  {"chips", setup.slice->chips},
                  {"machine_type", std::string(setup.slice->machine.name)}};
  return j;
}

void WriteRecommendText(const TuningSetup& setup, const Recommendation& r, int grain_pick,
                        std::ostream& out) {
  const TuningInputs& in = setup.inputs;
  out << "grain_worker_count=" << r.decision.workers << r.note << "\n"
      << "  host:    " << in.host.source << ": " << Fixed(in.host.cpu_cores, 1) << " cpu, "
      << Bytes(in.host.memory_bytes) << ", " << in.host.tpu_chips << " chips"
      << (setup.slice ? " (one of the " + std::to_string(setup.slice->hosts) + " hosts of " +
                            setup.slice->name + ")"
                      : std::string())
      << "\n"
      << "  reason:  " << r.decision.reason << "\n"
      << "  MaxText default would use " << kMaxTextDefaultWorkers
      << "; MaxText's -1 (Grain pick_performance_config, ram_budget_mb 1024) " << grain_pick
      << "\n";
}

}  // namespace

int RunRecommend(const Args& args, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(RecommendSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(RecommendSpec(), line, out, err)) return *code;
  const server::Flags& flags = line->flags;
  Result<TuningSetup> setup = TuningFromFlags(flags);
  if (!setup.ok()) {
    err << "graintune recommend: " << setup.error() << "\n";
    return 2;
  }
  for (const std::string& w : setup->warnings) err << "graintune recommend: warning: " << w << "\n";
  const int modes = flags.Get("history").has_value() + flags.Get("runs").has_value() +
                    flags.Get("lap").has_value();
  if (modes > 1) {
    err << "graintune recommend: --history (attempts of one run), --runs (earlier runs) and --lap "
           "(this run's practice lap) exclude each other\n";
    return 2;
  }
  const std::optional<std::string> lap = flags.Get("lap");
  const Result<Recommendation> r =
      lap ? FromLap(setup->inputs, *lap, flags) : FromTrials(setup->inputs, flags);
  if (!r.ok()) {
    err << "graintune recommend: " << r.error() << "\n";
    return 2;
  }
  const int grain_pick =
      GrainPickPerformanceWorkers(setup->inputs.demand.element_bytes, setup->inputs.host.cpu_cores);
  if (line->output != OutputFormat::kText) {
    WriteStructured(RecommendJson(*setup, *r, grain_pick), line->output, out);
    return 0;
  }
  WriteRecommendText(*setup, *r, grain_pick, out);
  return 0;
}

}  // namespace graintune::cli
