// PlanWorkerCount: what graintune does to one object (Pod, Job or JobSet) under admission.
//
// Finds every place grain_worker_count(-_eval) asks for -1 (the registered site finders,
// site_finders.h), reads the workload's tuning inputs (workload/tuning_inputs.h), picks the
// attempt's value (tuner/attempt_value.h: history's recommendation, a kept value, else
// Decide()), and returns the object as it should be stored plus what was found, for the
// JSONPatch and for `graintune explain`. What each kind gets (docs/architecture.md):
//   Job:    the pod template's -1s become the value; the Job and its template carry
//           graintune.dev/worker-count and graintune.dev/reason; the template is labelled
//           graintune.dev/managed=true so pod retries can be re-picked.
//   Pod:    a -1, or the value graintune applied earlier (managed pods), becomes the value
//           current for its attempt.
//   JobSet: the templates hold the first attempt's value; the JobSet is annotated with it, and a
//           warning says so and whether restarts keep it.
// Every container with a site is read on its own (its argv, env and config) and decides for
// itself whether a resume restores Grain's iterator; the workload's value follows its trainer
// (Plan::resume), never an init container, a sidecar or an ahead-of-time compile.
// Runs: an attempt that may restore Grain's iterator from its checkpoints keeps its run's value
// (tuner/attempt_value.h rule 0; the run read by workload/run_resume.h, looked up under this
// tuning key, then under any in the namespace). Pods and Jobs carry what was read of the run:
// graintune.dev/resume, graintune.dev/checkpoint-dir, graintune.dev/steps.
// Attempts: a JobSet restart's label, a plain Job's failed pods, graintune's own annotation.
// Its parts: planner_sites.h (what is found, and which container decides), planner_attempt.h
// (which attempt of which run), planner_maxtext_fit.h (what MaxText accepts) and
// planner_launcher.h (the practice lap and the start check, one call from the writer).
// Everything else in the object stays byte-for-byte as written. Never throws; a failure to
// decide (no host shape, a source down) leaves the object unchanged with a warning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/decision.h"
#include "webhook/exporter_injection.h"
#include "webhook/work_budget.h"
#include "webhook/worker_count_edit.h"
#include "workload/pod_templates.h"
#include "workload/run_resume.h"
#include "workload/sources.h"

namespace graintune::webhook {

struct PlannerSources {
  workload::NodeShapeSource& shapes;
  workload::HistorySource& history;
  workload::ConfigMapSource& configmaps;
  workload::PolicySource& policies;
  workload::JobStatusSource* jobs = nullptr;  // optional: numbers plain Jobs' pod retries as attempts
};

struct Finding {
  std::string object;     // "Job default/llama" or "JobSet default/x, replicatedJob slice"
  std::string container;
  std::string site;       // args, script, env, configmap, annotation
  std::string key;
  std::string pointer;    // absolute JSON pointer of what changed
  std::string before;     // "-1"
  int value = 0;          // what it became (for JobSets: what the first attempt will get); -1 left
  std::string left;       // why graintune leaves this -1 as written (empty: it wrote `value`)
  workload::RunResume resume;  // what this container's own config says about resuming
  // The value graintune's start check starts this -1 with at the trainer's start (within what
  // MaxText accepts, unless the run's checkpoint saved a count; docs/start-check.md); nullopt:
  // MaxText picks it.
  std::optional<int> start_fill;
};

// What the planner made of an object, for people (`graintune explain`, warnings) and metrics.
enum class PlanOutcome {
  kNothingToTune,  // no grain_worker_count=-1 (nor an unset one under tuneUnset)
  kTuned,          // values chosen and written (a JobSet: announced for its pods)
  kDeferred,       // -1 found, but no TPU host known yet: its pods are tuned when created
  kRecommendOnly,  // policy mode Off: the value is only in a warning
  kKeptAsWritten,  // a pod of an attempt graintune already set: left alone
  kLeftToMaxText,  // MaxText may refuse any value graintune could write (workload/maxtext_limits.h),
                   // or graintune cannot rewrite the -1: left for MaxText to pick, with a warning
  kLeftToStartCheck,  // the same -1 left as written, and the trainer starts through the start
                      // check, which starts it with `workers` within what MaxText accepts
  kOverBudget,     // the work budget ran out: left unchanged
};
std::string ToString(PlanOutcome outcome);

struct Plan {
  PlanOutcome outcome = PlanOutcome::kNothingToTune;
  nlohmann::json mutated;                  // the object to store (== input when unchanged)
  bool changed = false;
  // JSON pointers of the subtrees `mutated` may differ in from the input (nothing outside them
  // does), and the RFC 6902 patch from the input to `mutated` computed over them
  // (webhook/scoped_patch.h); changed == !patch.empty().
  std::vector<std::string> touched;
  nlohmann::json patch = nlohmann::json::array();
  std::vector<Finding> findings;
  std::vector<std::string> warnings;
  std::optional<Decision> decision;        // set when Decide() made the value
  int attempt = 0;                         // the attempt a Pod or Job belongs to
  int workers = 0;
  int eval_workers = 0;
  std::string reason;
  std::string tuning_key;
  // What a measured demand transfers by (workload/demand_key.h); empty on an unknown host.
  std::string demand_key;
  // The GrainTunings ("namespace/name") whose learned figures Decide() used for the value: in
  // the object's namespace, or one its policy's learnFrom shares. Empty when the value came from
  // the workload's own history (a recommendation, its run's value) or nothing was learned.
  std::vector<std::string> learned_from;
  HostShape host;
  // Of the run's trainer, once inputs were read: the first container whose own config may restore
  // Grain's iterator, else the first regular container that is no ahead-of-time compile.
  workload::RunResume resume;
  // The practice lap (policy spec.lap, webhook/lap_injection.h), for people: what runs before
  // the trainer, or why this run gets none; empty when its policy asks for no lap.
  std::string lap;
  // The start check (policy spec.startCheck, docs/start-check.md), for people: which trainers
  // start through graintune-launcher with it, or why one does not; empty when nothing was tuned.
  std::string start_check;
};

// `object` is taken by value and rewritten in place (an admission moves the request's object in:
// nothing is copied but the subtrees the patch covers). `exporter`: when set, tuned Job
// templates and Pods also get the exporter sidecar (exporter_injection.h). `budget`: when set
// and spent (too many sites, too long), the object is left unchanged with the budget's warning
// as the only one.
Plan PlanWorkerCount(nlohmann::json object, workload::WorkloadKind kind, const std::string& ns,
                     PlannerSources sources, const ExporterInjection* exporter = nullptr,
                     WorkBudget* budget = nullptr);

}  // namespace graintune::webhook
