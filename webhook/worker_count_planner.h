// PlanWorkerCount: what graintune does to one object (Pod, Job or JobSet) under admission.
//
// Finds every place grain_worker_count(-_eval) asks for -1 (site_finders.h), decides one value
// for the workload (history's current recommendation for the attempt, else tuner::Decide),
// and returns the object as it should be stored plus what was found, for the JSONPatch and for
// `graintune explain`. What each kind gets (DESIGN.md, "Runtime behaviour"):
//   Job:    the pod template's -1s become the value; the Job and its template carry
//           graintune.dev/worker-count and graintune.dev/reason; the template is labelled
//           graintune.dev/managed=true so pod retries can be re-picked.
//   Pod:    a -1, or the value graintune applied earlier (managed pods), becomes the value
//           current for its attempt.
//   JobSet: the spec keeps -1 so every restart re-picks; the JobSet is annotated with the value
//           its first attempt will get, and a warning says so.
// Attempts: a JobSet restart's label, a plain Job's failed pods, graintune's own annotation. A
// Job or Pod that names an attempt whose pods are all gone (history's ended attempts: a Kueue
// re-admission after preemption, a resubmission under the same tuning key) is a new run and
// becomes the attempt the recommendation is for; a late pod of an attempt still running keeps
// that attempt's value.
// Everything else in the object stays byte-for-byte as written. Never throws; a failure to
// decide (no host shape, a source down) leaves the object unchanged with a warning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/decision.h"
#include "webhook/pod_templates.h"
#include "webhook/exporter_injection.h"
#include "webhook/sources.h"
#include "webhook/worker_count_edit.h"

namespace graintune::webhook {

struct PlannerSources {
  NodeShapeSource& shapes;
  HistorySource& history;
  ConfigMapSource& configmaps;
  PolicySource& policies;
  JobStatusSource* jobs = nullptr;  // optional: numbers plain Jobs' pod retries as attempts
};

struct Finding {
  std::string object;     // "Job default/llama" or "JobSet default/x, replicatedJob slice"
  std::string container;
  SiteKind kind;
  std::string key;
  std::string pointer;    // absolute JSON pointer of what changed
  std::string before;     // "-1"
  int value = 0;          // what it became (for JobSets: what the first attempt will get)
};

struct Plan {
  nlohmann::json mutated;                  // the object to store (== input when unchanged)
  bool changed = false;
  // JSON pointers of the subtrees `mutated` may differ in from the input (nothing outside them
  // does), and the RFC 6902 patch from the input to `mutated` computed over them
  // (webhook/scoped_patch.h); changed == !patch.empty().
  std::vector<std::string> touched;
  nlohmann::json patch = nlohmann::json::array();
  std::vector<Finding> findings;
  std::vector<std::string> warnings;
  std::optional<Decision> decision;        // set when a value was decided
  std::optional<TuningInputs> inputs;      // what a decision is made from (the operator re-uses it)
  int attempt = 0;                         // the attempt a Pod or Job belongs to
  int workers = 0;
  int eval_workers = 0;
  std::string reason;
  std::string tuning_key;
  HostShape host;
};

// `exporter`: when set, tuned Job templates and Pods also get the exporter sidecar
// (exporter_injection.h).
Plan PlanWorkerCount(const nlohmann::json& object, WorkloadKind kind, const std::string& ns,
                     PlannerSources sources, const ExporterInjection* exporter = nullptr);

// The attempt an object belongs to: the larger of JobSet's jobset.sigs.k8s.io/restart-attempt
// label and graintune's graintune.dev/attempt annotation (graintune numbers a new run of an
// ended attempt past the label), else 0. `metadata` is the object's metadata.
int AttemptOf(const nlohmann::json& metadata);

// The tuning key: graintune.dev/tuning-key, else the owning JobSet, else the Job, else the pod.
std::string TuningKeyOf(const nlohmann::json& object, WorkloadKind kind);

}  // namespace graintune::webhook
