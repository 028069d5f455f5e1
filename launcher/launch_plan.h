// The launcher's plan: what a practice lap runs and what the trainer then starts with, as edits of
// the container's own command.
//
// The webhook wraps a trainer's command as
//   graintune-launcher [flags] -- <the container's command and args, with admission's value>
// and tells the launcher, by flags, where graintune's value sits in that command (a byte range
// of one argv element: an exec-form word or a `bash -c` script; or an M_ variable) and where
// MaxText's overrides end (after argv element I, or at byte O of a script element), so the
// launcher never parses MaxText or shell itself: it appends words where the webhook said and
// rewrites one range, leaving every other byte as written.
//
// The lap: the same command with the lap's overrides after the container's own (MaxText's later
// duplicate wins): `steps`, checkpointing off, output to a pod-local directory under its own
// run_name, its own metrics file, eval and profiler off. The trainer: the same command with the
// run's value in place of admission's.
// Pure: plain values in and out; every error is a Status naming the flag or range at fault.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::launcher {

// Where graintune's value sits in the wrapped command.
struct ValueSite {
  // argv[arg][begin, end) holds the value; or, when env_name is set, that variable does.
  size_t arg = 0;
  size_t begin = 0;
  size_t end = 0;
  std::string env_name;
};

// Where the lap's overrides go: as new argv elements after argv[arg], or (in_script) as words
// inserted at byte `offset` of the script argv[arg].
struct LapInsertion {
  size_t arg = 0;
  bool in_script = false;
  size_t offset = 0;
};

struct LapOverrides {
  int steps = 0;
  std::string output_directory;  // pod-local, removed after the lap
  std::string run_name = "graintune-practice-lap";
  std::string metrics_file;      // what graintune's exporter follows for the lap
  // The trainer's learning-rate schedule length (MaxText's learning_rate_schedule_steps, or its
  // steps). The schedule is compiled into MaxText's train step, so with the trainer's own length
  // the lap compiles the very program the trainer runs and the trainer finds it in the JAX
  // compilation cache (jax_cache_dir) instead of compiling again. Unknown: no word, no cache hit.
  std::optional<int> schedule_steps;
};

// The file that says a pod's lap has started: `lap_directory` + ".started", beside the lap's
// folder in the pod's emptyDir, where it outlives a container restart and the folder's removal.
std::string LapMarkerPath(const std::string& lap_directory);

// MaxText `key=value` words that keep a lap off its run: its own step count, no checkpoint, no
// output beside the run's, no eval, no profile. Every value is one shell word with no quoting.
std::vector<std::string> LapWords(const LapOverrides& overrides);

// The M_ variables naming the keys of `words`: MaxText refuses a key set both on its command line
// and in its environment, so the lap runs without them (the trainer keeps them). "steps=40" ->
// "M_STEPS".
std::vector<std::string> EnvNamesOf(const std::vector<std::string>& words);

// Parses "ARG:BEGIN:END" (--value-at) and "ARG" / "ARG:OFFSET" (--lap-after-arg,
// --lap-in-script).
Result<ValueSite> ParseValueAt(const std::string& text);
Result<LapInsertion> ParseLapInsertion(const std::string& text, bool in_script);

// The lap's argv. Errors: the insertion is outside the command, or a script offset past the
// script's end.
Result<std::vector<std::string>> LapArgv(const std::vector<std::string>& argv,
                                         const LapInsertion& insertion,
                                         const std::vector<std::string>& words);

// A command and the environment variables the launcher sets before starting it.
struct Command {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> set_env;
};

// The trainer's command with `workers` in place of the value at `site`, which must hold `written`
// (admission's value): in argv, the range's bytes; for an M_ variable, `env_now`, its value in the
// launcher's environment. Errors: the range is outside its element, or the place holds anything
// else (the command is not the one the webhook described: a later admission rewrote it).
Result<Command> WithValue(const std::vector<std::string>& argv, const ValueSite& site, int written,
                          int workers, const std::optional<std::string>& env_now);


}  // namespace graintune::launcher
