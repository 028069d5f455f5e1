// Site finders: each knows one place where grain_worker_count=-1 can hide and turns it into
// edits. A new place is one new finder and one line in DefaultSiteFinders().
//
// Finders are pure over their ContainerContext (the ConfigMap's YAML is read by the planner
// beforehand), never throw, and report what they must leave alone as warnings.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/policy.h"
#include "webhook/container_overrides.h"
#include "webhook/worker_count_edit.h"
#include "webhook/workload_annotations.h"

namespace graintune::webhook {

inline constexpr const char* kWorkerCountKeys[] = {"grain_worker_count", "grain_worker_count_eval"};

struct ContainerContext {
  const nlohmann::json& container;
  std::string pointer;                      // absolute JSON pointer of the container
  std::string name;
  const ContainerOverrides& overrides;
  // The MaxText YAML config mounted from a ConfigMap, flattened to scalar strings; null if none.
  const std::map<std::string, std::string>* config_values;
  const WorkloadAnnotations& annotations;
  bool managed;                             // graintune applied a value to this pod before
  const Policy& policy;
};

class SiteFinder {
 public:
  virtual ~SiteFinder() = default;
  virtual void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
                    std::vector<std::string>& warnings) const = 0;
};

// -1 written as an override: argv element, word in a bash -c script, or M_ env var. On a pod
// graintune already manages, also the value it applied (so a retry gets the current value).
class OverrideSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>& warnings) const override;
};

// grain_worker_count: -1 in a MaxText YAML mounted from a ConfigMap: an override is injected
// right after the config file argument (the ConfigMap is never edited).
class ConfigMapSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>& warnings) const override;
};

// graintune.dev/worker-count: "-1" on the workload (or a policy that tunes unset counts): the
// override is injected as M_GRAIN_WORKER_COUNT into the MaxText container.
class AnnotationSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>& warnings) const override;
};

const std::vector<std::unique_ptr<SiteFinder>>& DefaultSiteFinders();

}  // namespace graintune::webhook
