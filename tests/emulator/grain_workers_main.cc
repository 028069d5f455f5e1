// grain_workers: a stand-in for a MaxText trainer and its Grain worker processes, for the node
// tests' real OOMKilled. It runs as a container's PID 1 (the kubelet reports OOMKilled/137 only
// when the container's main process ends; a hog under `sh -c` is killed while the shell lives on),
// forks its workers the way Grain does (fork without exec: same command line, children of the
// "trainer"), and each worker allocates and touches memory step by step.
//
//   grain_workers [--workers N] [--worker-mib M] [--step-mib S] [--step-interval-ms T]
//                 [MaxText arguments ...]
//
// Contract:
//   - Workers: --workers N, else the last `grain_worker_count=N` among the positional arguments
//     (MaxText's override syntax, as the webhook writes it), else $M_GRAIN_WORKER_COUNT, else 1.
//     0..256; anything else is a usage error (exit 2). Other positional arguments are ignored,
//     so a command line such as `grain_workers MaxText.train base.yml grain_worker_count=-1`
//     matches the exporter's default trainer pattern ("MaxText").
//   - Each worker adds S MiB (default 16) every T ms (default 100), writing every page so the
//     memory is resident, until it holds M MiB (default 0: no cap, it grows until killed); then
//     it holds that memory and sleeps. Progress lines go to stdout every 64 MiB and at the cap.
//   - SIGTERM or SIGINT to the trainer: it sends SIGTERM to the workers, reaps them and exits 0.
//   - A worker that dies by a signal (the kernel's OOM killer picks the largest process, a
//     worker) makes the trainer kill the other workers and exit 128+signal (137 for SIGKILL), as
//     a trainer dies when a Grain worker does. A worker that exits non-zero makes it exit 1.
//   - Workers die with the trainer (PR_SET_PDEATHSIG). Other children (orphans reparented to
//     PID 1) are reaped and otherwise ignored.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/flags.h"
#include "tests/emulator/maxtext_words.h"

namespace {

constexpr char kProgram[] = "grain_workers";
constexpr int kMaxWorkers = 256;
constexpr size_t kMiB = 1024 * 1024;

struct WorkerPlan {
  int cap_mib = 0;  // 0: no cap
  int step_mib = 16;
  int step_interval_ms = 100;
};

int ParseWorkerCount(const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0 || value > kMaxWorkers)
    graintune::server::ExitWithUsageError(
        kProgram, "worker count must be 0.." + std::to_string(kMaxWorkers) + ", got '" + text + "'");
  return static_cast<int>(value);
}

[[noreturn]] void RunWorker(int index, const WorkerPlan& plan) {
  size_t held_mib = 0;
  size_t reported_mib = 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (;;) {
    if (plan.cap_mib > 0 && held_mib >= static_cast<size_t>(plan.cap_mib)) break;
    const size_t bytes = static_cast<size_t>(plan.step_mib) * kMiB;
    void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
      std::fprintf(stderr, "%s: worker %d: mmap: %s\n", kProgram, index, std::strerror(errno));
      _exit(1);
    }
    char* bytes_at = static_cast<char*>(block);
    for (size_t at = 0; at < bytes; at += page) bytes_at[at] = static_cast<char>(at / page + 1);
    held_mib += static_cast<size_t>(plan.step_mib);
    if (held_mib >= reported_mib + 64) {
      reported_mib = held_mib;
      std::printf("%s: worker %d pid %d holds %zu MiB\n", kProgram, index, getpid(), held_mib);
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(plan.step_interval_ms));
  }
  std::printf("%s: worker %d pid %d holds %zu MiB (its cap) and sleeps\n", kProgram, index, getpid(),
              held_mib);
  std::fflush(stdout);
  for (;;) pause();
}

void KillAndReap(const std::set<pid_t>& workers, int signo) {
  for (pid_t pid : workers) kill(pid, signo);
  for (pid_t pid : workers) waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune;
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(server::Arguments(argc, argv),
                                     {"workers", "worker-mib", "step-mib", "step-interval-ms"}));
  std::optional<std::string> count_text = flags.Get("workers");
  if (!count_text) count_text = testing::MaxTextValue(flags.positional(), "grain_worker_count");
  const int workers = count_text ? ParseWorkerCount(*count_text) : 1;
  WorkerPlan plan;
  plan.cap_mib = server::ExitOnUsageError(kProgram, flags.IntegerIn("worker-mib", 0, 1 << 20))
                     .value_or(plan.cap_mib);
  plan.step_mib = server::ExitOnUsageError(kProgram, flags.IntegerIn("step-mib", 1, 4096))
                      .value_or(plan.step_mib);
  plan.step_interval_ms =
      server::ExitOnUsageError(kProgram, flags.IntegerIn("step-interval-ms", 0, 60000))
          .value_or(plan.step_interval_ms);

  // Blocked before forking, so no signal is lost between a fork and sigwaitinfo.
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGINT);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, nullptr);

  std::printf("%s: pid %d starting %d workers (cap %d MiB each, %d MiB every %d ms)\n", kProgram,
              getpid(), workers, plan.cap_mib, plan.step_mib, plan.step_interval_ms);
  std::fflush(stdout);
  const pid_t trainer = getpid();
  std::set<pid_t> live;
  for (int i = 0; i < workers; ++i) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("grain_workers: fork");
      KillAndReap(live, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != trainer) _exit(1);  // the trainer died before prctl took effect
      sigprocmask(SIG_UNBLOCK, &waited, nullptr);
      RunWorker(i, plan);
    }
    live.insert(pid);
  }

  for (;;) {
    siginfo_t info;
    if (sigwaitinfo(&waited, &info) < 0) continue;  // EINTR
    if (info.si_signo == SIGTERM || info.si_signo == SIGINT) {
      std::printf("%s: signal %d, stopping %zu workers\n", kProgram, info.si_signo, live.size());
      std::fflush(stdout);
      KillAndReap(live, SIGTERM);
      return 0;
    }
    // SIGCHLD: reap everything that ended (several children may share one signal).
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      if (live.erase(pid) == 0) continue;  // an orphan, not ours
      if (WIFSIGNALED(status)) {
        const int signo = WTERMSIG(status);
        std::printf("%s: worker pid %d killed by signal %d; the trainer ends\n", kProgram, pid,
                    signo);
        std::fflush(stdout);
        KillAndReap(live, SIGKILL);
        return 128 + signo;
      }
      if (WEXITSTATUS(status) != 0) {
        std::printf("%s: worker pid %d exited %d; the trainer ends\n", kProgram, pid,
                    WEXITSTATUS(status));
        std::fflush(stdout);
        KillAndReap(live, SIGKILL);
        return 1;
      }
    }
    if (live.empty() && workers > 0) return 0;
  }
}
