// Calibration of the pipeline simulator on observed MaxText step logs.
//
// Grid search over the figures the logs cannot show directly (per-worker token rate, its
// jitter, compilation time, worker start-up, compute step), scoring each candidate by how well
// the simulator, averaged over several seeds, reproduces every observed run's first step, its
// mean step time after warm-up and its count of near-zero (batch was already waiting) steps.
// Pure and deterministic.
#pragma once

#include <string>
#include <vector>

#include "tuner/pipeline_simulator.h"
#include "base/status.h"

namespace graintune {

struct ObservedRun {
  int workers = 0;
  std::vector<double> step_seconds;  // step 1 first
};

struct CalibrationResult {
  PipelineParams params;  // `base` with the fitted figures set
  double error = 0;       // mean relative error of the fitted figures, lower is better
};

// Parses the shared CSV format "grain_worker_count,step,tflops_per_device,step_seconds"
// (lines starting with '#' are comments) into runs ordered by worker count.
Result<std::vector<ObservedRun>> ParseStepCsv(const std::string& text);

// Errors: no runs, or a run with fewer than 4 steps.
Result<CalibrationResult> Calibrate(const std::vector<ObservedRun>& runs,
                                    const PipelineParams& base, int seeds = 8);

}  // namespace graintune
