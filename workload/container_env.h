// ContainerEnv: a container's environment as its process will see it, from its `envFrom` and
// `env`, resolved through the ConfigMaps graintune can read.
//
// Kubernetes' order: every envFrom source in turn (a later one wins), then every env entry (a
// later one wins over anything before). What is resolved:
//   env[i].value                      the literal, with the kubelet's $(VAR) references to
//                                     variables before it expanded (kubernetes_expansion.h)
//   env[i].valueFrom.configMapKeyRef  the key's data; a missing key of an optional ref is unset
//   env[i].valueFrom.fieldRef         JOBSET_NAME's JobSet name (as xpk sets it), when given
//   envFrom[i].configMapRef           every key of the ConfigMap, with the entry's prefix
// Everything else (secretKeyRef, other fields, resourceFieldRef, a ConfigMap graintune could
// not read) is set to a value graintune cannot see; an envFrom it cannot read may set any name
// (may_set_any). A ConfigMapSource error is "could not tell", never a failure of the whole.
//
// Bounded: at most kMaxEnvVariables variables are kept (the rest: may_set_any). Never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload/kubernetes_expansion.h"
#include "workload/sources.h"

namespace graintune::workload {

inline constexpr size_t kMaxEnvVariables = 4096;

struct EnvVariable {
  std::string name;
  std::optional<std::string> value;  // nullopt: set to something graintune cannot see
  // The JSON pointer (relative to the container) of the string holding the value when it is a
  // literal env[i].value ("" when it comes from elsewhere: it cannot be rewritten there).
  std::string pointer;
  std::string source;  // where it came from, for reasons: "env", "ConfigMap ns/name", ...
};

struct ContainerEnv {
  std::vector<EnvVariable> variables;  // each name once, as the process sees it
  bool may_set_any = false;            // an envFrom graintune could not read
  std::string may_set_any_why;
  // name -> index in `variables`, kept by ResolveContainerEnv (Find reads it when it is
  // complete, else scans: a ContainerEnv built by hand works too).
  std::map<std::string, size_t> index;

  const EnvVariable* Find(const std::string& name) const;
  // A $(NAME) reference in the container's command or args, as the kubelet resolves it.
  KubernetesVariable Reference(const std::string& name) const;
};

// `configmaps` may be null (only literals are read; every reference is unknown). `jobset_name`
// is the JobSet the pod belongs to ("" when unknown).
ContainerEnv ResolveContainerEnv(const nlohmann::json& container, const std::string& ns,
                                 ConfigMapSource* configmaps, const std::string& jobset_name);

}  // namespace graintune::workload
