// graintune calibrate: fits the simulator to observed MaxText step logs (CSV).
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "server/flags.h"
#include "tuner/calibration.h"
#include "tuner/figures.h"

namespace graintune::cli {

const CommandSpec& CalibrateSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec spec;
    spec.name = "calibrate";
    spec.summary = "Fit the pipeline simulator to observed MaxText step times.";
    spec.usage = "--csv FILE [flags]";
    spec.description =
        "The CSV has one row per step, grain_worker_count,step,tflops_per_device,step_seconds\n"
        "('#' starts a comment), as in tuner/testdata/v6e-32-llama3-8b-steps.csv. Prints the fitted per-worker rate, jitter,\n"
        "compile and start-up times and compute step.";
    spec.flags = {{"csv", 0, "FILE", "", "observed step times (required)"},
                  {"tokens-per-step", 0, "N", "the Llama3-8B v6e-32 run's", "tokens per step per host"}};
    spec.examples = "  graintune calibrate --csv tuner/testdata/v6e-32-llama3-8b-steps.csv\n";
    return spec;
  }();
  return kSpec;
}

int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(CalibrateSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(CalibrateSpec(), line, out, err)) return *code;
  const server::Flags* flags = &line->flags;
  if (!flags->Get("csv")) {
    err << "graintune calibrate: --csv FILE is required\nSee 'graintune calibrate --help'.\n";
    return 2;
  }
  std::ifstream file(*flags->Get("csv"));
  if (!file) {
    err << "graintune calibrate: cannot read " << *flags->Get("csv") << "\n";
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<ObservedRun>> runs = ParseStepCsv(text.str());
  if (!runs.ok()) {
    err << "graintune calibrate: " << runs.error() << "\n";
    return 2;
  }
  PipelineParams base = SeedCalibratedParams();
  Result<std::optional<double>> tokens = flags->Number("tokens-per-step");
  if (!tokens.ok() || (*tokens && **tokens <= 0)) {
    err << "graintune calibrate: --tokens-per-step must be a positive number\n";
    return 2;
  }
  if (*tokens) base.tokens_per_step = **tokens;
  Result<CalibrationResult> fit = Calibrate(*runs, base);
  if (!fit.ok()) {
    err << "graintune calibrate: " << fit.error() << "\n";
    return 2;
  }
  const PipelineParams& p = fit->params;
  if (line->output != OutputFormat::kText) {
    WriteStructured(nlohmann::json{{"tokens_per_second_per_worker", p.tokens_per_second_per_worker},
                          {"batch_seconds_per_worker", p.tokens_per_step / p.tokens_per_second_per_worker},
                          {"worker_jitter_cv", p.worker_jitter_cv},
                          {"compile_seconds", p.compile_seconds},
                          {"worker_startup_seconds", p.worker_startup_seconds},
                          {"compute_step_seconds", p.compute_step_seconds},
                          {"error", fit->error}},
                    line->output, out);
    return 0;
  }
  out << "per-worker rate   " << Compact(p.tokens_per_second_per_worker) << " tok/s ("
      << Fixed(p.tokens_per_step / p.tokens_per_second_per_worker, 1) << " s per batch)\n"
      << "worker jitter cv  " << Fixed(p.worker_jitter_cv, 2) << "\n"
      << "compile           " << Fixed(p.compile_seconds, 1) << " s\n"
      << "worker start-up   " << Fixed(p.worker_startup_seconds, 1) << " s\n"
      << "compute step      " << Fixed(p.compute_step_seconds, 2) << " s\n"
      << "fit error         " << Fixed(fit->error, 3) << "\n";
  return 0;
}

}  // namespace graintune::cli
