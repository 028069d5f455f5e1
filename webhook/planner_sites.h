// What the planner finds in one object (webhook/worker_count_planner.h): its pod templates, the
// containers in each that hold a -1 the site finders found (each read with its own env, config and
// resume decision), and which container decides the run's value. Plus the small object helpers
// the planner's writers share (names, annotations). Pure: reads the object and the ConfigMaps the
// finders ask for, writes nothing but `warnings`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/policy.h"
#include "webhook/work_budget.h"
#include "webhook/worker_count_edit.h"
#include "workload/container_env.h"
#include "workload/container_overrides.h"
#include "workload/pod_templates.h"
#include "workload/run_resume.h"
#include "workload/sources.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook::planner {

using json = nlohmann::json;
using workload::WorkloadKind;

// One container with a site, and what its own effective config says about resuming.
struct ContainerSites {
  const json* container = nullptr;  // in the object
  std::string pointer;              // absolute JSON pointer of the container
  bool init = false;                // an init container (or a native sidecar)
  workload::ContainerOverrides overrides;
  std::optional<workload::ConfigValues> config;
  workload::RunResume resume;
  workload::ContainerEnv env;  // as its shell sees it: literals and its ConfigMaps
  // The counts an earlier admission applied (on an object graintune manages): a reinvocation
  // reads the starts that hold them as the first admission read the starts that held -1.
  std::optional<int> applied_workers, applied_eval_workers;
};

// What the finders found in one pod template.
struct TemplateSites {
  workload::PodTemplateRef ref;
  std::vector<Edit> edits;
  workload::WorkloadAnnotations annotations;  // the object's merged over this template's
  std::map<std::string, std::string> input_annotations;  // the graintune.dev/ inputs among them
  std::vector<ContainerSites> containers;  // those with an edit, in the order of the pod spec
};

// "Job default/name" (or the generateName with a "*").
std::string ObjectName(const json& object, WorkloadKind kind);

// Sets `annotations` and `labels` on the metadata at `metadata_pointer` (made when absent); with
// neither, the object is left exactly as written.
void Annotate(json& object, const std::string& metadata_pointer,
              const std::map<std::string, std::string>& annotations,
              const std::map<std::string, std::string>& labels);

// A JobSet replicatedJob's Job metadata, from its pod template's metadata pointer.
std::string JobMetadataOf(const workload::PodTemplateRef& ref);

// Every pod template of `object` with the containers the site finders found a -1 in (each read
// by FindContainerSites); empty when none, or when `budget` ran out.
std::vector<TemplateSites> FindSites(const json& object, WorkloadKind kind, const std::string& ns,
                                     const std::map<std::string, std::string>& object_annotations,
                                     const Policy& policy, workload::ConfigMapSource& configmaps,
                                     WorkBudget* budget, std::vector<std::string>& warnings);

// The container that decides a run's value among `containers`: a container whose own config
// may restore Grain's iterator decides (its run keeps its value; holding it is never wrong for
// the others), a trainer before an init container, a sidecar or an ahead-of-time compile; else
// the first trainer; else the first. nullptr when empty.
const ContainerSites* DecidingContainer(const std::vector<const ContainerSites*>& containers);

// The deciding container of one template (which is kept only with a container).
const ContainerSites& DecidingContainer(const TemplateSites& t);

// The run's deciding container across all templates (DecidingContainer above), with its
// template.
std::pair<const TemplateSites*, const ContainerSites*> DecidingContainer(
    const std::vector<TemplateSites>& found);

// Whether an edit writes something (a kLeave edit names a -1 graintune cannot rewrite).
inline bool Writes(const Edit& e) { return e.op != Edit::Op::kLeave; }

// The edits of `edits` that Writes() keeps.
std::vector<Edit> WritableEdits(const std::vector<Edit>& edits);

// Whether any template has a grain_worker_count_eval site.
bool HasEvalSite(const std::vector<TemplateSites>& found);

}  // namespace graintune::webhook::planner
