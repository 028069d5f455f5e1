// Running the practice lap as a child of the launcher, bounded in time.
//
// The lap is started in its own process group (so Grain's worker processes, which MaxText starts
// with multiprocessing, go with it), waited for through a pidfd until it exits or its deadline
// passes, then its whole group is stopped (SIGTERM, and SIGKILL after `grace`): nothing of the
// lap outlives it to compete with the trainer. The launcher itself never dies with the lap: an
// OOM kill of the lap's largest process, a crash, a non-zero exit or a hang are outcomes, not
// errors. A SIGTERM to the launcher while the lap runs (the pod is being stopped) goes to the
// lap's whole group at once, and the outcome says so (kStopped): the caller then starts no
// trainer. A lap called off (the caller's check, asked once a second, names why: the operator
// answered "none" because another host's lap failed) is stopped the same way, at once (kCalledOff).
// SIGTERM is blocked in the calling thread only while the lap runs and taken through a
// signalfd; the mask is restored before RunLap returns (an exec'd trainer inherits it). Not
// thread-safe (one lap per launcher).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::launcher {

struct LapOutcome {
  enum class Kind { kExited, kSignaled, kTimedOut, kStopped, kCalledOff, kNotStarted } kind = Kind::kNotStarted;
  int exit_code = -1;   // kExited
  int signal = 0;       // kSignaled (SIGKILL: what an OOM kill looks like from here)
  double wall_seconds = 0;
  std::string why;      // kNotStarted: why the command could not start; kCalledOff: why it was

  bool completed() const { return kind == Kind::kExited && exit_code == 0; }
  // "completed", "exited 1", "killed by signal 9", "timed out after 600 s", "stopped: ...",
  // "called off after 12 s: ...", "not started: ..."
  std::string Describe() const;
};

// Environment changes for the lap: a variable set to a value, or (nullopt) removed.
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

// Why a lap should end now, or nullopt to let it run; asked about once a second while it runs.
using CallOff = std::function<std::optional<std::string>()>;

// Runs argv (argv[0] searched in PATH) with the launcher's environment changed by `env`, and
// waits at most `timeout`, or until `call_off` (when set) names a reason.
LapOutcome RunLap(const std::vector<std::string>& argv, const EnvChanges& env,
                  std::chrono::seconds timeout, std::chrono::seconds grace, const CallOff& call_off = {});

}  // namespace graintune::launcher
