// A child process the harness started (etcd, kube-apiserver, KWOK, a webhook under test), that
// cannot outlive the harness: it is killed by the kernel (PR_SET_PDEATHSIG) if the harness dies
// for any reason, and stopped (SIGTERM, then SIGKILL) when this object goes away. It leads its
// own process group: whatever it started there is killed when it stops.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::testing {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess() { Stop(); }
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path: no PATH lookup) with stdout and stderr appended to log_path and
  // this process's environment, `extra_env` ("NAME=value") replacing variables of its names.
  static Result<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                    const std::string& log_path,
                                    const std::vector<std::string>& extra_env = {});

  bool Running();
  // SIGTERM, wait up to `grace`, then SIGKILL; then SIGKILL to what is left of its group.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // SIGKILL at once (a crash, as tests of failover need).
  void Kill();
  pid_t pid() const { return pid_; }
  // How it ended, once Running() has seen it end: its exit code, or 128 + the signal.
  std::optional<int> exit_status() const { return exit_status_; }
  const std::string& name() const { return name_; }
  const std::string& log_path() const { return log_path_; }

 private:
  static void KillGroup(pid_t group);
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string name_;
  std::string log_path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
Result<int> FreeLoopbackPort();

// The last `bytes` of a file, for error messages that point at a log.
std::string TailOfFile(const std::string& path, size_t bytes = 2000);

// Runs `command` under /bin/sh and returns what it printed on standard output, or an error
// value holding `what` and that output when it cannot start or exits non-zero.
Result<std::string> RunShell(const std::string& command, const std::string& what);

// Writes `text` to `path`, replacing it; an error value when it cannot.
Status WriteFile(const std::string& path, const std::string& text);

}  // namespace graintune::testing
