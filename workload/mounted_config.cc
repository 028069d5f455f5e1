#include "workload/mounted_config.h"

#include "workload/pod_templates.h"

#include <yaml-cpp/yaml.h>

namespace graintune::workload {

Result<ConfigValues> FlattenYamlScalars(const std::string& text) {
  // yaml-cpp tokenizes the whole text before it builds anything: 1 MiB of "[" held 252 MB.
  if (text.size() > kMaxConfigBytes)
    return Status::Error("MaxText config is " + std::to_string(text.size()) +
                         " bytes, over the " + std::to_string(kMaxConfigBytes / 1024) +
                         " KiB graintune reads; its settings are not read");
  try {
    const YAML::Node root = YAML::Load(text);
    ConfigValues values;
    if (!root.IsMap()) return Status::Error("MaxText config is not a YAML mapping");
    for (const auto& entry : root) {
      if (entry.first.IsScalar() && entry.second.IsScalar())
        values[entry.first.as<std::string>()] = entry.second.as<std::string>();
    }
    return values;
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string("MaxText config YAML does not parse: ") + e.what());
  }
}

namespace {

// One file of the chain, read from the ConfigMap volume mounted at its path.
Result<std::optional<ConfigValues>> LoadOneConfig(const nlohmann::json& pod_spec,
                                                  const nlohmann::json& container,
                                                  const std::string& config_path,
                                                  const std::string& ns,
                                                  ConfigMapSource& configmaps) {
  using Missing = std::optional<ConfigValues>;
  if (!container.contains("volumeMounts") || !container["volumeMounts"].is_array()) return Missing();
  // The mount that holds the file: the longest mountPath that is the path or its directory.
  const nlohmann::json* best = nullptr;
  size_t best_len = 0;
  for (const nlohmann::json& m : container["volumeMounts"]) {
    if (!m.is_object() || !m.contains("mountPath") || !m["mountPath"].is_string()) continue;
    std::string mount = m["mountPath"].get<std::string>();
    while (mount.size() > 1 && mount.back() == '/') mount.pop_back();
    const bool exact = config_path == mount;
    const bool under = config_path.rfind(mount + "/", 0) == 0;
    if ((exact || under) && mount.size() >= best_len) {
      best = &m;
      best_len = mount.size();
    }
  }
  if (!best) return Missing();
  std::string relative = config_path.size() > best_len ? config_path.substr(best_len + 1) : "";
  if (best->contains("subPath") && (*best)["subPath"].is_string()) {
    const std::string sub = (*best)["subPath"].get<std::string>();
    relative = relative.empty() ? sub : sub + "/" + relative;
  }
  const std::string volume_name = StringField(*best, "name");
  if (!pod_spec.contains("volumes") || !pod_spec["volumes"].is_array()) return Missing();
  for (const nlohmann::json& v : pod_spec["volumes"]) {
    if (!v.is_object() || StringField(v, "name") != volume_name) continue;
    if (!v.contains("configMap") || !v["configMap"].is_object()) return Missing();
    const nlohmann::json& cm = v["configMap"];
    const std::string cm_name = StringField(cm, "name");
    std::string key = relative;
    if (cm.contains("items") && cm["items"].is_array()) {
      key.clear();
      for (const nlohmann::json& item : cm["items"]) {
        if (item.is_object() && StringField(item, "path") == relative) key = StringField(item, "key");
      }
      if (key.empty()) return Missing();
    }
    Result<std::optional<std::string>> data = configmaps.Get(ns, cm_name, key);
    if (!data.ok())
      return Status::Error("ConfigMap " + ns + "/" + cm_name + ": " + data.error());
    if (!*data) return Missing();
    Result<ConfigValues> values = FlattenYamlScalars(**data);
    if (!values.ok()) return Status::Error("ConfigMap " + ns + "/" + cm_name + " key " + key +
                                           ": " + values.error());
    return std::optional<ConfigValues>(*values);
  }
  return Missing();
}

}  // namespace

Result<std::optional<ConfigValues>> LoadMountedConfig(const nlohmann::json& pod_spec,
                                                      const nlohmann::json& container,
                                                      const std::string& config_path,
                                                      const std::string& ns,
                                                      ConfigMapSource& configmaps) {
  Result<std::optional<ConfigValues>> first = LoadOneConfig(pod_spec, container, config_path, ns, configmaps);
  if (!first.ok() || !*first) return first;
  ConfigValues values = **first;
  std::string path = config_path;
  // maxtext 0.2.5 configs/pyconfig.py _load_config (lines 188-203): a relative base_config is
  // looked up beside the file that names it, then in MaxText's own configs directory; the
  // child's keys win over its base's. Followed while the base is in a mounted ConfigMap.
  for (int depth = 0; depth < kMaxConfigChain; ++depth) {
    auto base = values.find("base_config");
    if (base == values.end()) break;
    const std::string base_path = base->second.rfind('/', 0) == 0
                                      ? base->second
                                      : path.substr(0, path.rfind('/') + 1) + base->second;
    Result<std::optional<ConfigValues>> parent =
        LoadOneConfig(pod_spec, container, base_path, ns, configmaps);
    if (!parent.ok()) return parent.status();
    if (!*parent) break;  // in MaxText's configs or the image: EffectiveConfig holds what it may set
    ConfigValues merged = std::move(**parent);
    values.erase("base_config");
    for (auto& [k, v] : values) merged[k] = std::move(v);
    values = std::move(merged);
    path = base_path;
  }
  return std::optional<ConfigValues>(std::move(values));
}

}  // namespace graintune::workload
