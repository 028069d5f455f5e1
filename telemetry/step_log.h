// The exporter's memory of a run: the recent steps of the metrics file (bounded), the process
// figures last sampled, and counters. Serialised for the operator as /steps JSON:
//   {"run": 2, "steps": [{"step": 12, "step_time_seconds": 4.31, "tflops_per_device": 195.1,
//    "tokens_per_device_per_second": 7617}], "lines": 40, "malformed_lines": 1,
//    "process": {"workers": 8, "worker_busy_fraction": 0.62, ...}, "lap": {...},
//    "start_check": {...}}
// ("lap": the pod's practice lap, lap_report.h; "start_check": what the start check saw at the
// trainer's start, start_check_report.h).
// `run` grows when the metrics file restarts (a new run in the same pod), so a reader never
// mixes the steps of two runs. Thread-safe.
#pragma once

#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/answer_fields.h"
#include "telemetry/lap_report.h"
#include "telemetry/start_check_report.h"

namespace graintune::telemetry {

class StepLog {
 public:
  explicit StepLog(size_t max_steps = 20000, std::string pod_uid = "")
      : max_steps_(max_steps), pod_uid_(std::move(pod_uid)) {}

  void Restart();
  void Add(const std::vector<StepSample>& samples, int lines, int malformed);
  void SetProcess(const ProcessFigures& figures);
  // The pod's practice lap as the exporter last saw it (served as the document's "lap").
  void SetLap(LapReport lap);
  // The trainer's start check (served as the document's "start_check").
  void SetStartCheck(StartCheckReport report);

  // Steps with step > since (all when since < 0).
  nlohmann::json ToJson(long since) const;

  struct Totals {
    int run = 0;
    long lines = 0, malformed = 0, steps = 0;
    std::optional<StepSample> last;
    std::optional<ProcessFigures> process;
  };
  Totals totals() const;

 private:
  mutable std::mutex mu_;
  size_t max_steps_;
  std::string pod_uid_;
  std::deque<StepSample> steps_;
  Totals totals_;
  std::optional<LapReport> lap_;
  std::optional<StartCheckReport> start_check_;
};

// The /steps document back into values (for the operator). An answer comes from a pod, which
// its owner controls: every figure is checked against the bounds below, the steps must rise, and
// anything else is an error starting "rejected: " that names the field (never an exception, a
// stall, or a figure that could carry a decision outside the policy's bounds).
struct StepsDocument {
  std::string pod_uid;  // of the pod the exporter runs in; empty when it was not told
  int run = 0;
  std::vector<StepSample> steps;
  long malformed_lines = 0;
  std::optional<ProcessFigures> process;
  std::optional<LapReport> lap;  // the pod's practice lap, once the exporter saw one
  std::optional<StartCheckReport> start_check;  // once the trainer's start check reported
};
Result<StepsDocument> ParseStepsDocument(const std::string& body);


}  // namespace graintune::telemetry
