#include "launcher/lap_process.h"

#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "launcher/child_process.h"

namespace graintune::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for the lap's end until `deadline`, a SIGTERM on `signal_fd`, or `call_off` naming a
// reason (asked once a second; the reason lands in `called_off`, and the wait reads kTimedOut).
Waited WaitForLap(int pidfd, pid_t pid, Clock::time_point deadline, int signal_fd, const CallOff& call_off,
                  std::optional<std::string>& called_off) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const auto slice = call_off ? std::min(left, std::chrono::milliseconds(1000)) : left;
    const Waited waited = WaitForEnd(pidfd, pid, std::max(slice, std::chrono::milliseconds(0)), signal_fd);
    if (waited != Waited::kTimedOut || Clock::now() >= deadline) return waited;
    if (call_off && (called_off = call_off()) != std::nullopt) return Waited::kTimedOut;
  }
}

// Stops every process left in the lap's group: asks a leader still running to stop, then kills
// the group once `grace` has passed (or at once when the leader has already exited).
void StopGroup(pid_t group, std::chrono::seconds grace, int pidfd, bool leader_alive) {
  if (leader_alive) {
    kill(-group, SIGTERM);
    WaitForEnd(pidfd, group, std::chrono::duration_cast<std::chrono::milliseconds>(grace));
  }
  kill(-group, SIGKILL);
}

// In the forked child: its own process group, the signal mask from before the lap, `env`, then
// argv; an exec that fails writes its errno into `error_fd` for the parent.
[[noreturn]] void ExecInOwnGroup(const std::vector<std::string>& argv, const EnvChanges& env,
                                 const sigset_t& mask, int error_fd) {
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  setpgid(0, 0);
  for (const auto& [name, value] : env) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  std::vector<char*> args = ExecArgv(argv);
  execvp(args[0], args.data());
  const int error = errno;
  (void)!write(error_fd, &error, sizeof error);
  _exit(127);
}

// Workers the lap left behind were reparented to the launcher (a subreaper while the lap runs,
// as it is the container's first process anyway): reap them, so none is still running, or a
// zombie, when the trainer starts. They die of the SIGKILL within moments; a bounded wait, so a
// process stuck in the kernel cannot hold the trainer back.
void ReapOrphans() {
  for (auto until = Clock::now() + std::chrono::seconds(5); Clock::now() < until;) {
    const pid_t reaped = waitpid(-1, nullptr, WNOHANG);
    if (reaped < 0) break;  // no child left
    if (reaped == 0) usleep(50000);
  }
}

}  // namespace

std::string LapOutcome::Describe() const {
  switch (kind) {
    case Kind::kExited:
      return exit_code == 0 ? "completed" : "exited " + std::to_string(exit_code);
    case Kind::kSignaled:
      return "killed by signal " + std::to_string(signal) +
             (signal == SIGKILL ? " (an OOM kill looks like this)" : "");
    case Kind::kTimedOut:
      return "timed out after " + std::to_string(static_cast<long>(wall_seconds)) + " s";
    case Kind::kStopped:
      return "stopped: the pod was told to stop (SIGTERM), and the lap's processes were stopped with it";
    case Kind::kCalledOff:
      return "called off after " + std::to_string(static_cast<long>(wall_seconds)) + " s: " + why;
    case Kind::kNotStarted:
      return "not started: " + why;
  }
  return "unknown";
}

LapOutcome RunLap(const std::vector<std::string>& argv, const EnvChanges& env,
                  std::chrono::seconds timeout, std::chrono::seconds grace, const CallOff& call_off) {
  LapOutcome outcome;
  if (argv.empty()) {
    outcome.why = "an empty command";
    return outcome;
  }
  int exec_error[2];
  if (pipe2(exec_error, O_CLOEXEC) != 0) {
    outcome.why = std::string("pipe: ") + std::strerror(errno);
    return outcome;
  }
  const Clock::time_point started = Clock::now();
  // SIGTERM while the lap runs is taken here (a signalfd), not by the default action, so that it
  // reaches the lap's group; the mask before the lap is what the child and, later, the trainer get.
  sigset_t sigterm, mask_before;
  sigemptyset(&sigterm);
  sigaddset(&sigterm, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigterm, &mask_before);
  const int signal_fd = signalfd(-1, &sigterm, SFD_CLOEXEC | SFD_NONBLOCK);
  const auto restore_signals = [&] {
    if (signal_fd >= 0) close(signal_fd);
    pthread_sigmask(SIG_SETMASK, &mask_before, nullptr);
  };
  // Orphans of the lap (Grain's workers whose parent died) come to the launcher, which reaps them.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t pid = fork();
  if (pid < 0) {
    outcome.why = std::string("fork: ") + std::strerror(errno);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    close(exec_error[0]);
    close(exec_error[1]);
    restore_signals();
    return outcome;
  }
  if (pid == 0) ExecInOwnGroup(argv, env, mask_before, exec_error[1]);
  setpgid(pid, pid);  // also here: no race with the child's own call
  close(exec_error[1]);
  int child_error = 0;
  const bool exec_failed = read(exec_error[0], &child_error, sizeof child_error) == sizeof child_error;
  close(exec_error[0]);
  const int pidfd = OpenPidFd(pid);
  std::optional<std::string> called_off;
  const Waited waited = exec_failed ? Waited::kEnded : WaitForLap(pidfd, pid, started + timeout, signal_fd, call_off, called_off);
  const bool exited = waited == Waited::kEnded;
  StopGroup(pid, grace, pidfd, !exited);
  int status = 0;
  waitpid(pid, &status, 0);
  ReapOrphans();
  if (pidfd >= 0) close(pidfd);
  prctl(PR_SET_CHILD_SUBREAPER, 0);  // the setting would survive the exec into the trainer
  // A SIGTERM that came while the group was being stopped is the same stop: taken, not delivered.
  const bool terminated = waited == Waited::kSignalled || TakeSignal(signal_fd);
  restore_signals();
  outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (exec_failed) {
    outcome.why = argv[0] + ": " + std::strerror(child_error);
  } else if (terminated) {
    outcome.kind = LapOutcome::Kind::kStopped;
  } else if (called_off) {
    outcome.kind = LapOutcome::Kind::kCalledOff;
    outcome.why = *called_off;
  } else if (!exited) {
    outcome.kind = LapOutcome::Kind::kTimedOut;
  } else if (WIFEXITED(status)) {
    outcome.kind = LapOutcome::Kind::kExited;
    outcome.exit_code = WEXITSTATUS(status);
  } else {
    outcome.kind = LapOutcome::Kind::kSignaled;
    outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return outcome;
}

}  // namespace graintune::launcher
