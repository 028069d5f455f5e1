// What the exporter learns from /proc when it shares the pod's PID namespace
// (shareProcessNamespace: true): the trainer process (its command line contains a pattern,
// case ignored: "MaxText" by default, which finds `python -m MaxText.train` and maxtext 0.2.x's
// `python -m maxtext.trainers.pre_train.train`; shells, whose command line holds the script
// that starts it, and graintune-launcher running a practice lap never are), Grain's worker processes (the trainer's descendants but
// multiprocessing's resource tracker and forkserver), their peak
// resident memory (VmHWM), the trainer's cpu use and how busy the workers were between two
// samples. The /proc root is a parameter so tests can point at a fake tree.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "telemetry/process_figures.h"

namespace graintune::exporter {


class ProcessSampler {
 public:
  ProcessSampler(std::string proc_root = "/proc", std::string trainer_pattern = "MaxText");
  // Reads /proc now. nullopt when no trainer process is visible (not started, or the pod does
  // not share its PID namespace). Rates need two samples; the first has them at -1.
  std::optional<telemetry::ProcessFigures> Sample(std::chrono::steady_clock::time_point now);

 private:
  struct Ticks {
    double trainer = 0;
    std::map<int, double> workers;  // pid -> utime+stime
    std::chrono::steady_clock::time_point at;
  };
  std::string root_;
  std::string pattern_;
  std::optional<Ticks> last_;
};

}  // namespace graintune::exporter
