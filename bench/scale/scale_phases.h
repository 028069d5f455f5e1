// The measured phases of scale_bench (scale_main.cc drives them in order) over a running local
// install: one attempt of every workload and its recommendations' latency, a restart of every
// workload, and a window of the operator's cost (CPU, memory, API requests, status writes,
// exporter read gaps). Each waits with a bound and stops early when `interrupted` is set.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "base/status.h"
#include "bench/scale/exporter_standin.h"
#include "bench/scale/local_install.h"
#include "bench/scale/scale_cluster.h"
#include "bench/scale/scale_figures.h"
#include "bench/scale/workload_tracker.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::bench {

struct ScalePhases {
  testing::ControlPlane& cp;
  LocalInstall& install;
  ExporterStandIn& standin;
  WorkloadTracker& tracker;
  ScaleShape shape;
  std::string audit_log;
  std::chrono::milliseconds step_interval;
  int timeout_s;
  const std::atomic<bool>& interrupted;

  // Waits for every workload's `attempt` to run, then for each recommendation; the latency of
  // each from its trial's last needed step, into `into`.
  Status MeasureAttempt(int attempt, bool bad, PhaseFigures& into);
  // Fails one running pod of every workload: their next attempt.
  Status Restart(int attempt);
  // The operator's cost over `seconds`.
  Result<WindowFigures> Window(int seconds);

 private:
  void Say(const std::string& text) const;
  bool WaitFor(const std::function<bool()>& done, int seconds) const;
  bool Pause(int seconds) const;
};

}  // namespace graintune::bench
