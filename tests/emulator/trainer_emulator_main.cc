// A stand-in for MaxText's trainer in end-to-end tests: writes MaxText-format metrics lines at
// the pace graintune's calibrated pipeline simulator gives for the injected worker count
// (the measured Llama3-8B on v6e host by default), so the exporter, operator and webhook see the
// step-time shapes of real runs: compile, fast steps while the prefetch buffer lasts, then the
// data-bound rate when workers are too few.
//
//   trainer_emulator --workers N --metrics-file F [--steps K] [--time-scale S] [--seed X]
//                    [--pipeline-command CMD] [--exit-when-done 1]
// Time is scaled (0.05: a 4.3 s step takes 215 ms) but reported step times are the simulated
// ones. The file is truncated at start and each step's line is written when the next step ends
// (one step late), as MaxText does.
//
// --pipeline-command (default: $GRAINTUNE_TRAINER_PIPELINE_COMMAND, so a whole demo or e2e run
// can switch) replaces the simulator with a real pipeline: CMD, with {workers} and {steps}
// substituted, runs under /bin/sh and prints "<step seconds> <compute seconds>" per step as it
// ends (bench/real_grain/paced_trainer.py: real Grain worker processes, children of this
// process); those real, unscaled step times are written instead.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/emulator/metrics_line.h"
#include "tuner/pipeline_simulator.h"

namespace {

using graintune::testing::AppendMetricsLine;

std::string Substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

// Steps from a real pipeline command; returns the exit status to end with.
int RunPipeline(const std::string& command, const std::string& file, double tokens_per_step) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::cerr << "trainer_emulator: cannot start pipeline command: " << command << "\n";
    return 1;
  }
  char buffer[256];
  int step = 0;
  double previous = -1, previous_compute = 0;
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    double seconds = 0, compute = 0;
    if (std::sscanf(buffer, "%lf %lf", &seconds, &compute) != 2 || seconds < 0) {
      std::cerr << "trainer_emulator: pipeline printed an unreadable line: " << buffer;
      continue;
    }
    if (previous >= 0) AppendMetricsLine(file, step, previous, previous_compute, tokens_per_step);
    ++step;
    previous = seconds;
    previous_compute = compute;
  }
  const int status = ::pclose(pipe);
  if (status != 0) std::cerr << "trainer_emulator: pipeline command ended with status " << status << "\n";
  return status == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int workers = 0, steps = 40;
  double scale = 0.05;
  uint64_t seed = 1;
  std::string file;
  const char* pipeline_env = std::getenv("GRAINTUNE_TRAINER_PIPELINE_COMMAND");
  std::string pipeline = pipeline_env != nullptr ? pipeline_env : "";
  bool exit_when_done = false;  // a real trainer idles after its last step; tests want it to end
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--workers") workers = std::stoi(value);
    else if (flag == "--steps") steps = std::stoi(value);
    else if (flag == "--time-scale") scale = std::stod(value);
    else if (flag == "--seed") seed = std::stoull(value);
    else if (flag == "--metrics-file") file = value;
    else if (flag == "--pipeline-command") pipeline = value;
    else if (flag == "--exit-when-done") exit_when_done = value == "1" || value == "true";
  }
  if (workers <= 0 || file.empty() || steps < 2) {
    std::cerr << "usage: trainer_emulator --workers N --metrics-file F [--steps K] [--time-scale S]\n";
    return 2;
  }
  graintune::PipelineParams p = graintune::SeedCalibratedParams();
  p.workers = workers;
  std::ofstream(file, std::ios::trunc).flush();
  if (!pipeline.empty()) {
    const int status = RunPipeline(Substitute(Substitute(pipeline, "{workers}", std::to_string(workers)),
                                              "{steps}", std::to_string(steps)),
                                   file, p.tokens_per_step);
    if (status != 0) return status;
  } else {
    const graintune::SimulationResult sim = graintune::Simulate(p, steps, seed);
    for (int s = 0; s < static_cast<int>(sim.step_seconds.size()); ++s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(sim.step_seconds[s] * scale));
      if (s == 0) continue;  // step s's line appears when step s+1 ends
      AppendMetricsLine(file, s, sim.step_seconds[s - 1], p.compute_step_seconds, p.tokens_per_step);
    }
  }
  if (exit_when_done) return 0;
  // Then idle like a trainer between checkpoints until stopped.
  while (true) std::this_thread::sleep_for(std::chrono::seconds(60));
}
