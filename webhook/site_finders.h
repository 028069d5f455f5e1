// Site finders: each knows one place where grain_worker_count=-1 can hide and turns it into
// edits. A finder lives in its own *_sites.cc and registers itself there with
// GRAINTUNE_REGISTER_SITE_FINDER: a new place is one new file plus its line in CMakeLists.txt.
//
// Finders are pure over their ContainerContext (the ConfigMap's YAML is read by the planner
// beforehand), never throw, and report what they must leave alone as warnings. They run in the
// order of their registered rank, lowest first: a later finder sees the edits of earlier ones.
// Registration happens during static initialisation; SiteFinders() is safe to call from any
// thread after main() starts.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/policy.h"
#include "webhook/worker_count_edit.h"
#include "workload/container_overrides.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {

inline constexpr const char* kWorkerCountKeys[] = {"grain_worker_count", "grain_worker_count_eval"};

struct ContainerContext {
  const nlohmann::json& container;
  std::string pointer;                      // absolute JSON pointer of the container
  std::string name;
  const workload::ContainerOverrides& overrides;
  // The MaxText YAML config mounted from a ConfigMap, flattened to scalar strings; null if none.
  const std::map<std::string, std::string>* config_values;
  const workload::WorkloadAnnotations& annotations;
  bool managed;                             // graintune applied a value to this pod before
  const Policy& policy;
};

class SiteFinder {
 public:
  virtual ~SiteFinder() = default;
  // Appends the edits for this finder's place in one container; `edits` already holds what
  // earlier finders found in it.
  virtual void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
                    std::vector<std::string>& warnings) const = 0;
};

// Every registered finder, in rank order.
const std::vector<std::unique_ptr<SiteFinder>>& SiteFinders();

// Adds a finder under `rank`; returns true so it can initialise a static. Two finders of one
// rank run in the order they registered.
bool RegisterSiteFinder(int rank, std::unique_ptr<SiteFinder> finder);

#define GRAINTUNE_REGISTER_SITE_FINDER(Type, rank)                 \
  [[maybe_unused]] static const bool kRegistered##Type =           \
      ::graintune::webhook::RegisterSiteFinder(rank, std::make_unique<Type>())

}  // namespace graintune::webhook
