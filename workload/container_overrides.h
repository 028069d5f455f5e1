// ContainerOverrides: every MaxText `key=value` override a container passes, wherever it sits.
//
// MaxText reads overrides as argv words after its config file, and as environment variables
// named M_<KEY> (upper-case). In Kubernetes they appear as command/args elements, or as words
// inside a `bash -c`/`sh -c` script (xpk wraps every command that way), or in env. For each one
// this records where it is, down to the byte range of its value, so that a value can be
// rewritten without touching anything else. Also finds MaxText's config file argument (the
// first *.yml / *.yaml word), used for ConfigMap-mounted configs.
// Pure: works on nlohmann::json values, never throws on malformed containers (non-string
// elements are skipped).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace graintune::workload {

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
  bool replaceable = true;  // false when quoting splits the value
};

struct ConfigArgument {
  std::string path;         // as written, e.g. /etc/maxtext/config.yml
  std::string pointer;      // where it is (relative to the container)
  size_t end = 0;           // byte offset just past it inside that string
  OverrideLocation location = OverrideLocation::kArg;
};

struct ContainerOverrides {
  std::vector<Override> overrides;
  std::optional<ConfigArgument> config;
  bool invokes_maxtext = false;  // mentions MaxText's trainer (train.py / MaxText.train)

  // Last value of `key` across argv and env (argv wins, as MaxText raises on both).
  std::optional<std::string> Value(const std::string& key) const;
  bool HasKey(const std::string& key) const;
};

ContainerOverrides ScanContainer(const nlohmann::json& container);

// "M_GRAIN_WORKER_COUNT" -> "grain_worker_count"; "" when not an M_ name.
std::string MaxTextKeyFromEnv(const std::string& env_name);
// "grain_worker_count" -> "M_GRAIN_WORKER_COUNT".
std::string EnvNameForKey(const std::string& key);

}  // namespace graintune::workload
