// graintune calibrate: fits the simulator to observed MaxText step logs (CSV).
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "server/flags.h"
#include "tuner/calibration.h"
#include "tuner/figures.h"

namespace graintune::cli {

int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err) {
  Result<server::Flags> flags = server::Flags::Parse(args, {"csv", "tokens-per-step", "output"});
  if (!flags.ok() || !flags->Get("csv")) {
    err << "graintune calibrate: " << (flags.ok() ? "--csv FILE is required" : flags.error())
        << "\n";
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
  if (flags->Get("output").value_or("text") == "json") {
    out << nlohmann::json{{"tokens_per_second_per_worker", p.tokens_per_second_per_worker},
                          {"batch_seconds_per_worker", p.tokens_per_step / p.tokens_per_second_per_worker},
                          {"worker_jitter_cv", p.worker_jitter_cv},
                          {"compile_seconds", p.compile_seconds},
                          {"worker_startup_seconds", p.worker_startup_seconds},
                          {"compute_step_seconds", p.compute_step_seconds},
                          {"error", fit->error}}
               .dump()
        << "\n";
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
