#include "exporter/process_stats.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <vector>

#include "base/small_file.h"

namespace graintune::exporter {
namespace {

namespace fs = std::filesystem;

struct Proc {
  int pid = 0, ppid = 0;
  double ticks = 0;       // utime + stime
  double hwm_bytes = 0;   // VmHWM
  std::string name;       // the executable's name (status "Name:")
  std::string cmdline;
};

// A shell's command line holds the whole script it runs (xpk's `bash -c "... python3 -m
// MaxText.train ..."`), so it matches the trainer's pattern without being the trainer.
bool IsMultiprocessingHelper(const std::string& cmdline) {
  return cmdline.find("multiprocessing.resource_tracker") != std::string::npos ||
         cmdline.find("multiprocessing.forkserver") != std::string::npos;
}

bool IsShell(const std::string& name) {
  static const std::set<std::string> kShells = {"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "busybox"};
  return kShells.count(name) > 0;
}

// What wraps the trainer and holds its command line without being it: a shell, or
// graintune-launcher while it runs the practice lap (its argv holds the trainer's command after
// its `--`; once the lap is over it execs the trainer and is no longer itself).
bool IsWrapper(const std::string& name, const std::string& cmdline) {
  if (IsShell(name)) return true;
  const std::string argv0 = cmdline.substr(0, cmdline.find(' '));
  return argv0 == "graintune-launcher" || argv0.ends_with("/graintune-launcher");
}

std::optional<Proc> ReadProc(const fs::path& dir, int pid) {
  // (A process may exit while it is read: ReadSmallFile never throws, base/small_file.h.)
  const std::string text = ReadSmallFile((dir / "stat").string(), 4096);
  // The command name is in parentheses and may hold spaces; fields follow the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::vector<std::string> f;
  for (std::string x; rest >> x;) f.push_back(x);
  if (f.size() < 13) return std::nullopt;
  Proc p;
  p.pid = pid;
  p.ppid = std::atoi(f[1].c_str());        // field 4
  p.ticks = std::atof(f[11].c_str()) + std::atof(f[12].c_str());  // fields 14, 15
  std::istringstream status(ReadSmallFile((dir / "status").string(), 65536));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) p.hwm_bytes = std::atof(line.c_str() + 6) * 1024.0;
    else if (line.rfind("Name:", 0) == 0) {
      // Any process in the pod can set its own name, to nothing at all (prctl PR_SET_NAME "").
      const size_t start = line.find_first_not_of(" \t", 5);
      p.name = start == std::string::npos ? "" : line.substr(start);
    }
  std::string raw = ReadSmallFile((dir / "cmdline").string(), 1 << 20);
  for (char& c : raw)
    if (c == '\0') c = ' ';
  p.cmdline = raw;
  return p;
}

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

ProcessSampler::ProcessSampler(std::string proc_root, std::string trainer_pattern)
    : root_(std::move(proc_root)), pattern_(Lowercase(std::move(trainer_pattern))) {}

std::optional<telemetry::ProcessFigures> ProcessSampler::Sample(std::chrono::steady_clock::time_point now) {
  std::map<int, Proc> procs;
  std::error_code ec;
  // Processes come and go while /proc is read: the non-throwing increment, and an entry that
  // vanished is skipped.
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::optional<Proc> p = ReadProc(it->path(), std::atoi(name.c_str()))) procs[p->pid] = *p;
  }
  // The trainer: the oldest (lowest pid) matching process, not a wrapper, whose parent is not a
  // matching non-shell too (Grain's workers are forked from the trainer and share its command
  // line; the shells that wrap it are its ancestors, and their other children are not workers).
  // Nor is the exporter itself: its own command line holds the pattern when one is given.
  const int self = static_cast<int>(::getpid());
  auto matches = [&](const Proc& p) {
    return p.pid != self && !IsWrapper(p.name, p.cmdline) && Lowercase(p.cmdline).find(pattern_) != std::string::npos;
  };
  const Proc* trainer = nullptr;
  for (const auto& [pid, p] : procs) {
    if (!matches(p)) continue;
    auto parent = procs.find(p.ppid);
    if (parent != procs.end() && matches(parent->second)) continue;
    trainer = &p;
    break;
  }
  if (!trainer) return std::nullopt;
  std::set<int> descendants = {trainer->pid};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, p] : procs)
      if (!descendants.count(pid) && descendants.count(p.ppid)) grew = descendants.insert(pid).second;
  }
  descendants.erase(trainer->pid);
  // Python's multiprocessing starts helpers beside the workers it spawns (the resource
  // tracker, a forkserver): they hold no data pipeline, so they are no Grain workers.
  for (auto it = descendants.begin(); it != descendants.end();)
    it = IsMultiprocessingHelper(procs[*it].cmdline) ? descendants.erase(it) : std::next(it);

  telemetry::ProcessFigures f;
  f.workers = static_cast<int>(descendants.size());
  f.trainer_memory_bytes = trainer->hwm_bytes;
  Ticks ticks{trainer->ticks, {}, now};
  for (int pid : descendants) {
    f.worker_memory_bytes = std::max(f.worker_memory_bytes, procs[pid].hwm_bytes);
    ticks.workers[pid] = procs[pid].ticks;
  }
  static const double kHz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (last_) {
    const double wall = std::chrono::duration<double>(now - last_->at).count();
    if (wall > 0) {
      f.trainer_cpu_cores = std::max(0.0, (ticks.trainer - last_->trainer) / kHz / wall);
      double busy = 0;
      int compared = 0;
      for (const auto& [pid, t] : ticks.workers) {
        auto before = last_->workers.find(pid);
        if (before == last_->workers.end()) continue;  // started since: no rate yet
        busy += std::max(0.0, (t - before->second) / kHz);
        ++compared;
      }
      if (compared > 0) f.worker_busy_fraction = std::min(1.0, busy / (wall * compared));
    }
  }
  last_ = ticks;
  return f;
}

}  // namespace graintune::exporter
