#include "launcher/child_process.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/small_file.h"

namespace graintune::launcher {

using Clock = std::chrono::steady_clock;

std::vector<char*> ExecArgv(const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (const std::string& a : argv) pointers.push_back(const_cast<char*>(a.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

int OpenPidFd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

bool HasEnded(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0)
    return info.si_pid == pid;  // a child: ended once waitid names it
  // Not a child: /proc/PID/stat's state, after the command's closing paren.
  const std::string text = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z' ||
         text[paren + 2] == 'X';
}

bool TakeSignal(int signal_fd) {
  signalfd_siginfo info{};
  return signal_fd >= 0 && read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info);
}

Waited WaitForEnd(int pidfd, pid_t pid, std::chrono::milliseconds wait, int signal_fd) {
  const auto until = Clock::now() + wait;
  if (pidfd < 0) {
    for (;;) {
      if (HasEnded(pid)) return Waited::kEnded;
      if (TakeSignal(signal_fd)) return Waited::kSignalled;
      if (Clock::now() >= until) return Waited::kTimedOut;
      usleep(100000);
    }
  }
  pollfd p[2] = {{.fd = pidfd, .events = POLLIN, .revents = 0}, {.fd = signal_fd, .events = POLLIN, .revents = 0}};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    const int n = poll(p, signal_fd >= 0 ? 2 : 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (n > 0 && p[0].revents) return Waited::kEnded;
    if (n > 0 && TakeSignal(signal_fd)) return Waited::kSignalled;
    if (n == 0) return Waited::kTimedOut;
    if (n < 0 && errno != EINTR) return Waited::kTimedOut;
  }
}

}  // namespace graintune::launcher
