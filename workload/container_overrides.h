// ContainerOverrides: every MaxText `key=value` override a container passes, wherever it sits.
//
// MaxText reads overrides as argv words after its config file, and as environment variables
// named M_<KEY> (upper-case). In Kubernetes they appear as command/args elements, or as words
// inside a `bash -c`/`sh -c` script (xpk wraps every command that way), or in env. For each one
// this records where it is, down to the byte range of its value, so that a value can be
// rewritten without touching anything else. Also finds MaxText's config file argument (the
// first *.yml / *.yaml word), used for ConfigMap-mounted configs.
//
// A script's words are expanded as bash expands them (workload/shell_expansion.h), from the
// variables it assigns before and the container's env (workload/container_env.h): an unquoted
// $ARGS is split into the words it holds, each read as an override. A word that cannot be
// expanded inside a MaxText command (a command substitution, a variable graintune cannot see)
// makes the key it might carry unknown: its own key when written before the expansion
// (`run_name=$RUN`), else every key (`$ARGS`). An M_ variable set to something graintune cannot
// see makes its key unknown, and an envFrom it cannot read every key not on the command line.
// Before any of this, the kubelet's own $(VAR) expansion of command and args is applied, from the
// container's env (workload/kubernetes_expansion.h); a reference to a variable graintune cannot
// see makes what it may carry unknown, as above.
//
// A script may start MaxText more than once (a smoke run, then the run: `train ... && train
// ...`). Each command that names a trainer or train_compile is one MaxText start; the words of a
// start's command belong to it alone (Override::start), while argv words outside a script, env
// and the script's own assignments reach every start. OfStart(i) is what start i sees.
// Pure: works on nlohmann::json values, never throws on malformed containers (non-string
// elements are skipped).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload/container_env.h"

namespace graintune::workload {

// Override::start for a word every MaxText start of the container sees.
inline constexpr size_t kEveryStart = static_cast<size_t>(-1);

// Where in a container an override was found.
enum class OverrideLocation { kArg, kScript, kEnv };
std::string ToString(OverrideLocation location);  // "args", "script", "env"

struct Override {
  std::string key;          // MaxText key, lower-case (env M_FOO_BAR -> foo_bar)
  std::string value;
  OverrideLocation location = OverrideLocation::kArg;
  std::string pointer;      // JSON pointer (relative to the container) of the string holding it
  size_t value_begin = 0;   // byte range of the value inside that string
  size_t value_end = 0;
  bool replaceable = true;  // false when quoting splits the value, or it is not written here
  size_t order = 0;         // the position among all overrides and unknown keys, argv order
  size_t start = kEveryStart;  // the MaxText start whose command holds it
};

// A key some word may set to a value graintune cannot see.
struct UnknownKey {
  std::string key;   // "" for any key
  bool env = false;  // in the environment (M_*), else on the command line
  size_t order = 0;
  std::string why;   // e.g. "$ARGS cannot be expanded ($(cat /args))"
  size_t start = kEveryStart;
};

// What the container says of one key: the last word that sets it wins (argv over env).
struct KeyState {
  enum class Kind { kUnset, kUnknown, kSet } kind = Kind::kUnset;
  std::string value;  // kSet
  std::string why;    // kUnknown: why graintune cannot tell
};

struct ConfigArgument {
  std::string path;         // as written, e.g. /etc/maxtext/config.yml
  std::string pointer;      // where it is (relative to the container)
  size_t end = 0;           // byte offset just past it inside that string
  OverrideLocation location = OverrideLocation::kArg;
};

struct ContainerOverrides {
  std::vector<Override> overrides;
  std::vector<UnknownKey> unknown;
  std::optional<ConfigArgument> config;
  bool invokes_maxtext = false;  // mentions MaxText's trainer (train.py / MaxText.train)
  // Runs MaxText's ahead-of-time compiler (train_compile) and no trainer: nothing it does
  // trains, reads data or checkpoints (maxtext 0.2.5 trainers/pre_train/train_compile.py).
  bool aot_compile_only = false;
  // MaxText starts in a script (see above): 1 for exec-form args, and for a script that names no
  // trainer at all. start_compiles_only[i]: start i runs train_compile.
  size_t starts = 1;
  std::vector<bool> start_compiles_only;

  // What MaxText start `start` sees: the words of its own command and those of every start.
  ContainerOverrides OfStart(size_t start) const;

  // Last value of `key` across argv and env (argv wins, as MaxText raises on both); the words
  // graintune could read only (Lookup says whether an unknown word may set it).
  std::optional<std::string> Value(const std::string& key) const;
  bool HasKey(const std::string& key) const;
  KeyState Lookup(const std::string& key) const;
};

// `env`: the container's environment as resolved with its ConfigMaps (container_env.h); when
// null, only its literal env values are seen.
ContainerOverrides ScanContainer(const nlohmann::json& container, const ContainerEnv* env = nullptr);

// "M_GRAIN_WORKER_COUNT" -> "grain_worker_count"; "" when not an M_ name.
std::string MaxTextKeyFromEnv(const std::string& env_name);
// "grain_worker_count" -> "M_GRAIN_WORKER_COUNT".
std::string EnvNameForKey(const std::string& key);

}  // namespace graintune::workload
