#include "launcher/compile_watch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/log.h"
#include "launcher/child_process.h"
#include "server/flags.h"

namespace graintune::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Whether `file` holds a whole line past byte `offset`: MaxText writes one line per step.
bool HasLinePast(const std::string& file, long long offset) {
  std::ifstream in(file, std::ios::binary);
  if (!in || !in.seekg(offset)) return false;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    if (std::memchr(buffer, '\n', static_cast<size_t>(in.gcount()))) return true;
  return false;
}

}  // namespace

std::optional<std::string> LocalCacheDir(const std::string& configured, const char* home) {
  if (configured.empty() || configured.find("://") != std::string::npos) return std::nullopt;
  if (configured == "~" || configured.starts_with("~/")) {
    if (!home || !*home) return std::nullopt;
    return std::string(home) + configured.substr(1);
  }
  return configured;
}

std::set<std::string> TrainStepsIn(const std::string& cache_dir) {
  std::set<std::string> entries;
  std::error_code error;
  for (std::filesystem::directory_iterator it(cache_dir, error), end; !error && it != end; it.increment(error))
    if (std::string name = it->path().filename().string(); contract::IsTrainStepEntry(name))
      entries.insert(std::move(name));
  return entries;
}

std::vector<std::string> WatcherArgs(const CompileWatch& w, const std::string& result_file) {
  std::vector<std::string> args = {"graintune-launcher", std::string(kWatchFlag) + "=" + std::to_string(w.trainer),
                                   "--compile-cache-dir=" + w.cache_dir,
                                   "--trainer-metrics-file=" + w.metrics_file,
                                   "--metrics-offset=" + std::to_string(w.metrics_offset),
                                   "--watch-limit=" + std::to_string(w.limit.count()) + "s",
                                   "--result-file=" + result_file};
  for (const std::string& entry : w.before) args.push_back("--cache-before=" + entry);
  return args;
}

Result<std::pair<CompileWatch, std::string>> WatchFromArgs(const std::vector<std::string>& flag_args) {
  Result<server::Flags> flags = server::Flags::Parse(
      flag_args, {kWatchFlag + 2, "compile-cache-dir", "trainer-metrics-file", "metrics-offset",
                  "watch-limit", "result-file", "cache-before"});
  if (!flags.ok()) return flags.status();
  for (const char* name : {kWatchFlag + 2, "compile-cache-dir", "trainer-metrics-file", "metrics-offset",
                           "watch-limit", "result-file"})
    if (!flags->Has(name)) return Status::Error(std::string("--") + name + " is missing");
  Result<std::optional<int>> pid = flags->IntegerIn(kWatchFlag + 2, 1, 1 << 30);
  Result<std::optional<int>> offset = flags->IntegerIn("metrics-offset", 0, 1 << 30);
  Result<std::optional<std::chrono::seconds>> limit = flags->Duration("watch-limit");
  if (!pid.ok()) return pid.status();
  if (!offset.ok()) return offset.status();
  if (!limit.ok()) return limit.status();
  CompileWatch watch{.trainer = static_cast<pid_t>(**pid), .cache_dir = *flags->Get("compile-cache-dir"),
                     .metrics_file = *flags->Get("trainer-metrics-file"), .metrics_offset = **offset,
                     .limit = **limit};
  for (std::string& entry : flags->All("cache-before")) watch.before.insert(std::move(entry));
  return std::make_pair(std::move(watch), *flags->Get("result-file"));
}

bool StartWatcher(const std::string& self, const std::vector<std::string>& args) {
  // The first child forks the watcher and exits at once, so the watcher is adopted by the PID
  // namespace's first process (the pod's pause container when the pod shares its PID namespace,
  // as graintune's exporter asks): the launcher never waits for it, and the trainer, which execs
  // in the launcher's place, has no child of graintune's. (Where the trainer is itself the first
  // process, the ended watcher stays a zombie until the trainer exits: one entry, no memory.)
  const pid_t middle = fork();
  if (middle < 0) {
    LogLine(LogLevel::kWarning) << "cannot start the compile-cache watcher: " << std::strerror(errno);
    return false;
  }
  if (middle == 0) {
    if (fork() == 0) {
      std::vector<char*> argv = ExecArgv(args);
      execv(self.c_str(), argv.data());
      _exit(127);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

contract::TrainerCompileVerdict WatchTrainerCompile(const CompileWatch& w) {
  const int pidfd = OpenPidFd(w.trainer);
  for (const auto until = Clock::now() + w.limit;;) {
    // The trainer's exit ends the watch after one last look: its steps may all be written by then.
    const bool exited = WaitForEnd(pidfd, w.trainer, std::chrono::seconds(1)) == Waited::kEnded;
    std::set<std::string> now = TrainStepsIn(w.cache_dir);
    const bool stepped = HasLinePast(w.metrics_file, w.metrics_offset);
    contract::TrainerCompileVerdict verdict = contract::JudgeTrainerCompile(w.before, now);
    // A new train step settles it at once (compiled); no new one is a hit only once a step shows
    // the compile is over.
    if (verdict.verdict == contract::TrainerCompile::kCompiled || stepped || exited) {
      if (pidfd >= 0) close(pidfd);
      if (!stepped && verdict.verdict != contract::TrainerCompile::kCompiled)
        verdict = contract::JudgeTrainerCompile(w.before, std::nullopt);
      return verdict;
    }
    if (Clock::now() >= until) {
      if (pidfd >= 0) close(pidfd);
      return {contract::TrainerCompile::kUnknown,
              "the trainer wrote no step within " + std::to_string(w.limit.count()) + " s"};
    }
  }
}

}  // namespace graintune::launcher
