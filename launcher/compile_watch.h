// Watching whether the trainer found its train step in the JAX compilation cache its practice lap
// filled (contract/trainer_compile.h says how that is judged).
//
// The launcher execs the trainer, so it cannot watch it itself: just before the exec it lists the
// cache's train steps and starts a watcher, a fresh copy of its own binary (re-executed, so its
// command line holds none of the trainer's words and no process counter takes it for MaxText),
// detached by a double fork so neither the launcher nor the trainer has to wait for it. The watcher looks once a
// second until the trainer's metrics file grows past where it stood (its first step), a new train
// step appears in the cache, the trainer exits or `limit` passes; it then reports its verdict and
// exits. It reads two files and lists one folder; it writes only through `report`. A watcher that
// cannot start is logged and changes nothing of the run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "contract/trainer_compile.h"

namespace graintune::launcher {

// A jax_cache_dir as MaxText opens it (os.path.expanduser): "~" and "~/..." under `home`. nullopt
// when it is not a local folder (gs://..., or "~" without a home).
std::optional<std::string> LocalCacheDir(const std::string& configured, const char* home);

// The train-step entries (contract::IsTrainStepEntry) in `cache_dir`; empty when it cannot be read.
std::set<std::string> TrainStepsIn(const std::string& cache_dir);

// What the watcher watches, as the launcher saw it just before starting the trainer.
struct CompileWatch {
  pid_t trainer = 0;                   // the launcher's pid, the trainer's once it execs
  std::string cache_dir;               // local, expanded
  std::set<std::string> before;        // TrainStepsIn(cache_dir) then
  std::string metrics_file;            // the trainer's MaxText metrics file
  long long metrics_offset = 0;        // its size then (it may hold an earlier start's steps)
  std::chrono::seconds limit{7200};
};

// The watcher's command line (argv[0] "graintune-launcher", then its flags) and back; an error
// names the flag at fault.
std::vector<std::string> WatcherArgs(const CompileWatch& watch, const std::string& result_file);
Result<std::pair<CompileWatch, std::string>> WatchFromArgs(const std::vector<std::string>& flag_args);
inline constexpr char kWatchFlag[] = "--watch-trainer-compile";

// Starts the watcher (`self`: this binary) and returns at once; false, logged, when it could not.
bool StartWatcher(const std::string& self, const std::vector<std::string>& args);

// The watcher's loop: returns the verdict once it has one (bounded by `watch.limit`).
contract::TrainerCompileVerdict WatchTrainerCompile(const CompileWatch& watch);

}  // namespace graintune::launcher
