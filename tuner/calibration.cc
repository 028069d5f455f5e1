#include "tuner/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace graintune {
namespace {

constexpr double kNearZeroSeconds = 2.0;

struct RunShape {
  double first = 0;       // step 1 (compilation)
  double mean = 0;        // mean of steps 3..end
  double near_zero = 0;   // share of steps 3..end under kNearZeroSeconds
  double cv = 0;          // coefficient of variation of steps 3..end
};

RunShape ShapeOf(const std::vector<double>& steps) {
  RunShape shape;
  shape.first = steps.front();
  double sum = 0, zeros = 0, count = 0;
  for (size_t i = 2; i < steps.size(); ++i) {
    sum += steps[i];
    zeros += steps[i] < kNearZeroSeconds ? 1 : 0;
    count += 1;
  }
  shape.mean = count > 0 ? sum / count : 0;
  shape.near_zero = count > 0 ? zeros / count : 0;
  double squares = 0;
  for (size_t i = 2; i < steps.size(); ++i) squares += (steps[i] - shape.mean) * (steps[i] - shape.mean);
  shape.cv = count > 1 && shape.mean > 0 ? std::sqrt(squares / (count - 1)) / shape.mean : 0;
  return shape;
}

double Score(const std::vector<ObservedRun>& runs, const std::vector<RunShape>& observed,
             const PipelineParams& candidate, int seeds) {
  double error = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    PipelineParams p = candidate;
    p.workers = runs[r].workers;
    RunShape sim;
    for (int s = 0; s < seeds; ++s) {
      const SimulationResult result =
          Simulate(p, static_cast<int>(runs[r].step_seconds.size()), 1000 + s);
      const RunShape one = ShapeOf(result.step_seconds);
      sim.first += one.first / seeds;
      sim.mean += one.mean / seeds;
      sim.near_zero += one.near_zero / seeds;
      sim.cv += one.cv / seeds;
    }
    const RunShape& obs = observed[r];
    error += std::fabs(sim.mean - obs.mean) / obs.mean;          // throughput shape
    error += 0.5 * std::fabs(sim.first - obs.first) / obs.first;  // compilation
    error += 0.5 * std::fabs(sim.near_zero - obs.near_zero);      // the slow/near-zero pairs
    error += 0.5 * std::fabs(sim.cv - obs.cv);                    // how erratic the steps are
  }
  return error / static_cast<double>(runs.size());
}

}  // namespace

Result<std::vector<ObservedRun>> ParseStepCsv(const std::string& text) {
  std::map<int, std::map<int, double>> by_workers;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#' || line.rfind("grain_worker_count", 0) == 0) continue;
    std::istringstream fields(line);
    std::string workers, step, tflops, seconds;
    if (!std::getline(fields, workers, ',') || !std::getline(fields, step, ',') ||
        !std::getline(fields, tflops, ',') || !std::getline(fields, seconds, ','))
      return Status::Error("line " + std::to_string(line_no) + ": want 4 comma-separated fields");
    try {
      by_workers[std::stoi(workers)][std::stoi(step)] = std::stod(seconds);
    } catch (const std::exception&) {
      return Status::Error("line " + std::to_string(line_no) + ": not a number");
    }
  }
  std::vector<ObservedRun> runs;
  for (const auto& [workers, steps] : by_workers) {
    ObservedRun run;
    run.workers = workers;
    for (const auto& [step, seconds] : steps) run.step_seconds.push_back(seconds);
    runs.push_back(std::move(run));
  }
  if (runs.empty()) return Status::Error("no step rows found");
  return runs;
}

Result<CalibrationResult> Calibrate(const std::vector<ObservedRun>& runs,
                                    const PipelineParams& base, int seeds) {
  if (runs.empty()) return Status::Error("no runs to calibrate on");
  std::vector<RunShape> observed;
  for (const ObservedRun& run : runs) {
    if (run.step_seconds.size() < 4 || run.workers < 1)
      return Status::Error("each run needs >= 4 steps and >= 1 worker");
    observed.push_back(ShapeOf(run.step_seconds));
  }
  // The compute step is what the fastest run settles at: its median after warm-up.
  const ObservedRun& fastest = *std::max_element(
      runs.begin(), runs.end(), [](const ObservedRun& a, const ObservedRun& b) { return a.workers < b.workers; });
  std::vector<double> tail(fastest.step_seconds.begin() + 2, fastest.step_seconds.end());
  std::nth_element(tail.begin(), tail.begin() + static_cast<long>(tail.size() / 2), tail.end());
  const double compute = tail[tail.size() / 2];

  CalibrationResult best;
  best.error = 1e300;
  PipelineParams candidate = base;
  candidate.compute_step_seconds = compute;
  for (double batch_seconds = 24.0; batch_seconds <= 36.0; batch_seconds += 0.5) {
    candidate.tokens_per_second_per_worker = base.tokens_per_step / batch_seconds;
    for (double cv : {0.03, 0.06, 0.10, 0.15, 0.20}) {
      candidate.worker_jitter_cv = cv;
      for (double compile = 5.0; compile <= 45.0; compile += 2.5) {
        candidate.compile_seconds = compile;
        for (double startup : {0.5, 2.0, 5.0, 10.0}) {
          candidate.worker_startup_seconds = startup;
          const double error = Score(runs, observed, candidate, seeds);
          if (error < best.error) {
            best.error = error;
            best.params = candidate;
          }
        }
      }
    }
  }
  return best;
}

}  // namespace graintune
