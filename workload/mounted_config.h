// Reads the MaxText YAML config a container passes as its first argument when that file comes
// from a ConfigMap volume, through ConfigMapSource (the API's cache in a cluster).
//
// Resolves the path against the container's volumeMounts (longest mountPath prefix, subPath,
// the volume's items), fetches the key, and flattens the top-level scalar keys to strings
// ("grain_worker_count" -> "-1"). Follows the file's base_config chain as MaxText does (a
// relative path beside the file, the child's keys winning) while each base is in a mounted
// ConfigMap, kMaxConfigChain files at most; the base_config left in the result is one it could
// not follow (MaxText's own base.yml, or a file in the image). Returns nullopt when the file is
// not from a ConfigMap or the ConfigMap/key is absent; an error when the source failed or a
// YAML does not parse.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workload/sources.h"

namespace graintune::workload {

using ConfigValues = std::map<std::string, std::string>;

Result<std::optional<ConfigValues>> LoadMountedConfig(const nlohmann::json& pod_spec,
                                                      const nlohmann::json& container,
                                                      const std::string& config_path,
                                                      const std::string& ns,
                                                      ConfigMapSource& configmaps);

inline constexpr int kMaxConfigChain = 8;

// The largest config graintune parses (MaxText's own base.yml is ~40 KiB).
inline constexpr size_t kMaxConfigBytes = 256 * 1024;

// Top-level scalar keys of a YAML mapping, as strings. Error on malformed YAML or on a text
// over kMaxConfigBytes (not parsed at all).
Result<ConfigValues> FlattenYamlScalars(const std::string& yaml);

}  // namespace graintune::workload
