// graintune simulate: step times of one simulated attempt with a given worker count.
//
// The simulated truth is the dataset profile (default or the given figures), the estimated or
// given compute step, and the calibration's (to the Llama3-8B v6e-32 measurements) jitter, compile time and start-up.
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/tuning_flags.h"
#include "tuner/figures.h"
#include "tuner/pipeline_simulator.h"
#include "tuner/trial.h"

namespace graintune::cli {

const CommandSpec& SimulateSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec spec;
    spec.name = "simulate";
    spec.summary = "Step times of a simulated MaxText host with N Grain workers.";
    spec.usage = "--workers N --machine-type TYPE [flags]";
    spec.description =
        "The simulated truth is the dataset profile (its default or the figures given), the\n"
        "estimated or given compute step, and the jitter, compile time and start-up fitted to\n"
        "the Llama3-8B v6e-32 measurements in tuner/testdata/.";
    spec.flags = {{"workers", 0, "N", "", "Grain worker processes per host (required), 1-4096"},
                  {"steps", 0, "N", "20", "training steps to simulate"},
                  {"seed", 0, "N", "1", "random seed of the jitter"},
                  {"per-worker-buffer", 0, "N", "1", "batches each worker may hold ready"}};
    for (const FlagSpec& f : TuningFlagSpecs()) spec.flags.push_back(f);
    spec.examples = "  graintune simulate --workers 4 --machine-type v6e-32 --model-name llama3-8b\n";
    return spec;
  }();
  return kSpec;
}

int RunSimulate(const Args& args, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(SimulateSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(SimulateSpec(), line, out, err)) return *code;
  const server::Flags* flags = &line->flags;
  if (!flags->Get("workers")) {
    err << "graintune simulate: --workers N is required\nSee 'graintune simulate --help'.\n";
    return 2;
  }
  Result<TuningSetup> setup = TuningFromFlags(*flags);
  if (!setup.ok()) {
    err << "graintune simulate: " << setup.error() << "\n";
    return 2;
  }
  for (const std::string& w : setup->warnings) err << "graintune simulate: warning: " << w << "\n";
  Result<std::optional<int>> workers = flags->Integer("workers");
  Result<std::optional<int>> steps = flags->Integer("steps");
  Result<std::optional<int>> seed = flags->Integer("seed");
  Result<std::optional<int>> buffer = flags->Integer("per-worker-buffer");
  for (const Status& s : {workers.status(), steps.status(), seed.status(), buffer.status()}) {
    if (!s.ok()) {
      err << "graintune simulate: " << s.message() << "\n";
      return 2;
    }
  }
  if (!*workers || **workers < 1 || **workers > 4096) {
    err << "graintune simulate: --workers must be in [1, 4096]\n";
    return 2;
  }
  const int step_count = steps->value_or(20);
  if (step_count < 1 || step_count > 100000) {
    err << "graintune simulate: --steps must be in [1, 100000]\n";
    return 2;
  }

  const TuningInputs& in = setup->inputs;
  PipelineParams p = SeedCalibratedParams();
  p.workers = **workers;
  p.per_worker_buffer = buffer->value_or(1);
  p.tokens_per_step = in.demand.tokens_per_step_per_host;
  p.tokens_per_second_per_worker = in.profile.tokens_per_second_per_worker;
  p.worker_memory_bytes = in.profile.worker_memory_bytes;
  p.element_bytes = in.demand.element_bytes;
  p.compute_step_seconds = in.demand.compute_step_seconds;
  p.host_cpu_cores = in.host.cpu_cores;
  p.host_memory_bytes = in.host.memory_bytes;
  p.trainer_memory_bytes = DefaultReservedMemory(in.host.memory_bytes) * 0.5;
  const SimulationResult r = Simulate(p, step_count, static_cast<uint64_t>(seed->value_or(1)));

  Result<Trial> trial = SummarizeSteps(r.step_seconds, p.tokens_per_step);
  if (trial.ok()) trial.value().worker_busy_fraction = r.worker_busy_fraction;
  if (line->output != OutputFormat::kText) {
    nlohmann::json j = {{"workers", p.workers},
                        {"oom", r.oom},
                        {"step_seconds", r.step_seconds},
                        {"data_wait_fraction", r.data_wait_fraction}};
    if (trial.ok()) {
      j["steady_state"] = {{"step_seconds_mean", trial->step_seconds_mean},
                           {"tokens_per_second_per_host", trial->tokens_per_second_per_host},
                           {"worker_busy_fraction", trial->worker_busy_fraction},
                           {"data_bound", IsDataBound(*trial)}};
    }
    j["warnings"] = setup->warnings;
    WriteStructured(j, line->output, out);
    return 0;
  }
  if (r.oom) {
    out << p.workers << " workers: OOM-killed (trainer + workers exceed " << Bytes(p.host_memory_bytes)
        << ")\n";
    return 0;
  }
  for (size_t i = 0; i < r.step_seconds.size(); ++i)
    out << "step " << (i + 1) << "\t" << Fixed(r.step_seconds[i], 3) << " s\n";
  if (trial.ok()) {
    out << "steady state: " << Fixed(trial->step_seconds_mean, 2) << " s/step, "
        << Compact(trial->tokens_per_second_per_host) << " tok/s/host, "
        << (IsDataBound(*trial) ? "data-bound" : "chips fed") << "\n";
  }
  return 0;
}

}  // namespace graintune::cli
