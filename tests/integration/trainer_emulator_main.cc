// A stand-in for MaxText's trainer in end-to-end tests: writes MaxText-format metrics lines at
// the pace graintune's calibrated pipeline simulator gives for the injected worker count
// (the seed's Llama3-8B on v6e host by default), so the exporter, operator and webhook see the
// step-time shapes of real runs: compile, fast steps while the prefetch buffer lasts, then the
// data-bound rate when workers are too few.
//
//   trainer_emulator --workers N --metrics-file F [--steps K] [--time-scale S] [--seed X]
// Time is scaled (0.05: a 4.3 s step takes 215 ms) but reported step times are the simulated
// ones. The file is truncated at start and each step's line is written when the next step ends
// (one step late), as MaxText does.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "tuner/pipeline_simulator.h"

int main(int argc, char** argv) {
  int workers = 0, steps = 40;
  double scale = 0.05;
  uint64_t seed = 1;
  std::string file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--workers") workers = std::stoi(value);
    else if (flag == "--steps") steps = std::stoi(value);
    else if (flag == "--time-scale") scale = std::stod(value);
    else if (flag == "--seed") seed = std::stoull(value);
    else if (flag == "--metrics-file") file = value;
  }
  if (workers <= 0 || file.empty() || steps < 2) {
    std::cerr << "usage: trainer_emulator --workers N --metrics-file F [--steps K] [--time-scale S]\n";
    return 2;
  }
  graintune::PipelineParams p = graintune::SeedCalibratedParams();
  p.workers = workers;
  const graintune::SimulationResult sim = graintune::Simulate(p, steps, seed);
  std::ofstream(file, std::ios::trunc).flush();
  const double peak_tflops = 195.0;  // the seed's fed rate per chip at 4.3 s a step
  for (int s = 0; s < static_cast<int>(sim.step_seconds.size()); ++s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(sim.step_seconds[s] * scale));
    if (s == 0) continue;  // step s's line appears when step s+1 ends
    const double t = sim.step_seconds[s - 1];
    char line[256];
    std::snprintf(line, sizeof(line),
                  "{\"learning/loss\": 2.5, \"perf/step_time_seconds\": %.4f, "
                  "\"perf/per_device_tflops_per_sec\": %.2f, "
                  "\"perf/per_device_tokens_per_sec\": %.1f, \"step\": %d}\n",
                  t, t > 0 ? peak_tflops * p.compute_step_seconds / t : 0.0,
                  t > 0 ? p.tokens_per_step / 4.0 / t : 0.0, s);
    std::ofstream(file, std::ios::app) << line;
  }
  // Then idle like a trainer between checkpoints until stopped.
  while (true) std::this_thread::sleep_for(std::chrono::seconds(60));
}
