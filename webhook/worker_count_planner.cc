#include "webhook/worker_count_planner.h"

#include <algorithm>

#include "base/numbers.h"
#include "tuner/attempt_value.h"
#include "webhook/scoped_patch.h"
#include "webhook/site_finders.h"
#include "workload/identity.h"
#include "workload/mounted_config.h"
#include "workload/run_resume.h"
#include "workload/tuning_inputs.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;
using workload::WorkloadKind;

// What a pod template without a metadata block reads as.
const json kNoMetadata = json::object();

std::string ObjectName(const json& object, WorkloadKind kind) {
  std::string name = workload::MetadataString(object, "name");
  if (name.empty()) name = workload::MetadataString(object, "generateName") + "*";
  return ToString(kind) + " " + name;
}

void Annotate(json& object, const std::string& metadata_pointer,
              const std::map<std::string, std::string>& annotations,
              const std::map<std::string, std::string>& labels) {
  if (annotations.empty() && labels.empty()) return;  // leave the object exactly as written
  json& meta = object[json::json_pointer(metadata_pointer)];
  if (!meta.is_object()) meta = json::object();
  for (const auto& [k, v] : annotations) meta["annotations"][k] = v;
  for (const auto& [k, v] : labels) meta["labels"][k] = v;
}

// A JobSet replicatedJob's Job metadata, from its pod template's metadata pointer.
std::string JobMetadataOf(const workload::PodTemplateRef& ref) {
  return ref.metadata_pointer.substr(0, ref.metadata_pointer.rfind("/spec/template/metadata")) +
         "/metadata";
}

// What the finders found in one pod template.
struct TemplateSites {
  workload::PodTemplateRef ref;
  std::vector<Edit> edits;
  workload::WorkloadAnnotations annotations;  // the object's merged over this template's
  std::map<std::string, std::string> input_annotations;  // the graintune.dev/ inputs among them
  workload::ContainerOverrides overrides;  // of the first container with an edit
  std::optional<workload::ConfigValues> config;
  const json* container = nullptr;  // in the object
};

std::vector<TemplateSites> FindSites(const json& object, WorkloadKind kind, const std::string& ns,
                                     const std::map<std::string, std::string>& object_annotations,
                                     const Policy& policy, workload::ConfigMapSource& configmaps,
                                     WorkBudget* budget, std::vector<std::string>& warnings) {
  std::vector<TemplateSites> found;
  for (const workload::PodTemplateRef& ref : workload::LocatePodTemplates(object, kind)) {
    const json& spec = object.at(json::json_pointer(ref.spec_pointer));
    const json::json_pointer meta_pointer(ref.metadata_pointer);
    const json& template_meta =
        object.contains(meta_pointer) ? object.at(meta_pointer) : kNoMetadata;
    std::map<std::string, std::string> annotations = workload::StringMap(template_meta, "annotations");
    for (const auto& [k, v] : object_annotations) annotations[k] = v;
    std::vector<std::string> annotation_warnings;
    TemplateSites t;
    t.ref = ref;
    t.annotations = workload::ParseWorkloadAnnotations(annotations, annotation_warnings);
    for (const std::string& w : annotation_warnings)
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    for (const auto& [k, v] : annotations)
      if (workload::IsInputAnnotation(k)) t.input_annotations[k] = v;
    const std::string* managed_label =
        workload::StringEntry(template_meta, "labels", workload::kManagedLabel);
    const bool managed = managed_label && *managed_label == "true";
    for (const char* list : {"initContainers", "containers"}) {
      if (!spec.contains(list) || !spec[list].is_array()) continue;
      for (size_t i = 0; i < spec[list].size(); ++i) {
        const json& c = spec[list][i];
        if (!c.is_object()) continue;
        workload::ContainerOverrides overrides = workload::ScanContainer(c);
        std::optional<workload::ConfigValues> config;
        if (overrides.config) {
          Result<std::optional<workload::ConfigValues>> loaded =
              workload::LoadMountedConfig(spec, c, overrides.config->path, ns, configmaps);
          if (!loaded.ok()) warnings.push_back("graintune: " + loaded.error());
          else config = *loaded;
        }
        const std::string pointer = ref.spec_pointer + "/" + list + "/" + std::to_string(i);
        const ContainerContext ctx{c,      pointer, workload::StringField(c, "name"), overrides,
                                   config ? &*config : nullptr, t.annotations, managed, policy};
        const size_t before = t.edits.size();
        for (const auto& finder : SiteFinders()) finder->Find(ctx, t.edits, warnings);
        if (budget && !budget->Charge(static_cast<int>(t.edits.size() - before))) return {};
        if (t.edits.size() > before && !t.container) {
          t.overrides = std::move(overrides);
          t.config = std::move(config);
          t.container = &c;
        }
      }
    }
    if (!t.edits.empty()) found.push_back(std::move(t));
  }
  return found;
}

// A JobSet keeps -1 in its spec (child Jobs are tuned at their creation) and announces the
// value its first attempt will get.
// A Pod or Job gets the value written into every site, the applied annotations, the managed
// label and (when configured) the exporter sidecar.
void ApplyToTemplates(json& object, const std::string& object_name,
                      const std::vector<TemplateSites>& found,
                      const std::map<std::string, std::string>& applied,
                      const ExporterInjection* exporter, Plan& plan) {
  for (const TemplateSites& t : found) {
    for (const AppliedEdit& a : ApplyEdits(object, t.edits, [&](const Edit& e) {
           return IsEvalKey(e.key) ? plan.eval_workers : plan.workers;
         })) {
      plan.findings.push_back({object_name, a.edit.container_name, a.edit.site, a.edit.key,
                               a.pointer, a.edit.before, a.value});
    }
    // The inputs travel to the pods, where the operator reads them (and learns per dataset).
    std::map<std::string, std::string> template_annotations = t.input_annotations;
    for (const auto& [k, v] : applied) template_annotations[k] = v;
    Annotate(object, t.ref.metadata_pointer, template_annotations,
             {{workload::kManagedLabel, "true"}});
    if (exporter) {
      InjectExporter(object, t.ref.spec_pointer, t.ref.metadata_pointer,
                     t.edits.front().container_pointer, t.overrides, *exporter, plan.warnings);
    }
  }
}

// Every pointer the writers above may change, known before any write, so that the patch
// needs copies of just these subtrees (CopyTouched), never of the whole object.
std::vector<std::string> Touches(WorkloadKind kind, const std::vector<TemplateSites>& found,
                                 const ExporterInjection* exporter) {
  std::vector<std::string> touched = {"/metadata"};
  for (const TemplateSites& t : found) {
    touched.push_back(t.ref.metadata_pointer);
    if (kind == WorkloadKind::kJobSet) touched.push_back(JobMetadataOf(t.ref));
    for (const Edit& e : t.edits) touched.push_back(e.container_pointer);
    if (exporter)
      for (std::string& p : ExporterTouches(t.ref.spec_pointer, t.ref.metadata_pointer,
                                            t.edits.front().container_pointer))
        touched.push_back(std::move(p));
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

// What the primary container's effective config says about resuming (workload/run_resume.h).
// $JOBSET_NAME: the container's literal env, else (set from a field) the JobSet the object is or
// belongs to.
workload::RunResume ResumeOfPrimary(const json& object, WorkloadKind kind, const TemplateSites& primary) {
  const std::optional<std::string> env = workload::JobSetNameEnv(*primary.container);
  std::string jobset = env.value_or("");
  if (env && env->empty()) {
    jobset = kind == WorkloadKind::kJobSet
                 ? workload::MetadataString(object, "name")
                 : workload::StringMap(workload::MetadataOf(object), "labels")[workload::kJobSetNameLabel];
  }
  const workload::ConfigValues* config = primary.config ? &*primary.config : nullptr;
  return workload::ResumeOf(
      {primary.overrides, config, workload::ViewOfConfig(primary.overrides, config), jobset});
}

// PlanWorkerCount's work on `object`, which it rewrites in place.
Plan PlanInPlace(json& object, WorkloadKind kind, const std::string& ns, PlannerSources sources,
                 const ExporterInjection* exporter, WorkBudget* budget) {
  Plan plan;
  if (!object.is_object()) return plan;
  const json& object_meta = workload::MetadataOf(object);
  const std::map<std::string, std::string> object_labels = workload::StringMap(object_meta, "labels");
  const std::map<std::string, std::string> object_annotations =
      workload::StringMap(object_meta, "annotations");
  const Policy policy = sources.policies.PolicyFor(ns, object_labels);
  const std::vector<TemplateSites> found = FindSites(object, kind, ns, object_annotations, policy,
                                                     sources.configmaps, budget, plan.warnings);
  if (budget && !budget->exceeded().empty()) {
    plan.warnings = {budget->Warning()};
    plan.outcome = PlanOutcome::kOverBudget;
    return plan;
  }
  if (found.empty()) return plan;

  // One value for the whole workload, decided from its first MaxText container.
  const TemplateSites& primary = found.front();
  Result<TuningInputs> inputs = workload::BuildTuningInputs(
      object.at(json::json_pointer(primary.ref.spec_pointer)), *primary.container,
      primary.overrides, primary.config ? &*primary.config : nullptr, primary.annotations, policy,
      workload::InputSources{sources.shapes, &sources.history, ns}, plan.warnings);
  if (!inputs.ok()) {
    // A workload queued by Kueue gets its node selector at admission, after this CREATE: its
    // pods (or a JobSet's child Jobs) are looked at again when they are created.
    plan.warnings.push_back(
        "graintune: " + inputs.error() +
        (kind == WorkloadKind::kPod
             ? "; grain_worker_count left as written (MaxText picks for -1)"
             : "; left as written for now: its pods are tuned when created if they select TPU "
               "hosts by then (as after Kueue's admission), else MaxText picks for -1"));
    plan.outcome = PlanOutcome::kDeferred;
    return plan;
  }
  plan.host = inputs->host;
  plan.tuning_key = workload::TuningKeyOf(object, kind);
  plan.demand_key = inputs->demand.transfer_key;

  AttemptQuery query;
  query.attempt = workload::AttemptOf(object_meta);
  query.has_restart_label = object_labels.count(workload::kRestartAttemptLabel) > 0;
  query.announces_first_attempt = kind == WorkloadKind::kJobSet;
  query.only_applied_values = std::all_of(found.begin(), found.end(), [](const TemplateSites& t) {
    return std::all_of(t.edits.begin(), t.edits.end(),
                       [](const Edit& e) { return e.before != "-1" && e.before != "(unset)"; });
  });
  // Whether this attempt may restore Grain's iterator from its run's checkpoints.
  plan.resume = ResumeOfPrimary(object, kind, primary);
  query.pins_workers = plan.resume.pins_workers;
  query.checkpoint_dir = plan.resume.checkpoint_dir;
  if (query.only_applied_values)
    for (const Edit& e : primary.edits)
      if (!IsEvalKey(e.key)) {
        query.written_workers = ParseInt(e.before);
        break;
      }
  // A JobSet's restart: its Jobs and pods come from templates holding the value graintune gave
  // attempt 0 (the fallback above); unless the run keeps its value, that value is not this
  // attempt's, so it is re-picked.
  if (query.only_applied_values && query.has_restart_label && !query.pins_workers &&
      primary.annotations.applied_attempt != std::optional<int>(query.attempt))
    query.only_applied_values = false;
  // A plain Job's pod created after some of its pods failed is a retry: the next attempt(s).
  // A reinvocation sees the attempt this pod was given, failures included: they are taken
  // out first, so they count once.
  int failures_counted = 0;
  if (kind == WorkloadKind::kPod && sources.jobs && !query.has_restart_label) {
    auto job = object_labels.find("batch.kubernetes.io/job-name");
    if (job == object_labels.end()) job = object_labels.find("job-name");
    if (job != object_labels.end()) {
      if (const std::string* counted = workload::StringEntry(
              object_meta, "annotations", workload::kFailedPodsCountedAnnotation))
        if (std::optional<int> n = ParseInt(*counted); n && *n > 0 && *n <= query.attempt)
          query.attempt -= *n;
      if (std::optional<int> failed = sources.jobs->FailedPods(ns, job->second); failed && *failed > 0) {
        query.attempt += *failed;
        failures_counted = *failed;
      }
    }
  }
  std::optional<TuningHistory> history;
  if (Result<std::optional<TuningHistory>> h = sources.history.Lookup(ns, plan.tuning_key); h.ok()) {
    history = *h;
  } else {
    plan.warnings.push_back("graintune: history unavailable (" + h.error() +
                            "); deciding without earlier trials");
  }
  // A run this key has not recorded may have been started by another workload.
  if (query.pins_workers && !query.checkpoint_dir.empty() &&
      query.checkpoint_dir.find('<') == std::string::npos &&
      !(history && history->runs.count(query.checkpoint_dir))) {
    if (Result<std::optional<RunRecord>> run = sources.history.RunFor(ns, query.checkpoint_dir);
        run.ok() && *run) {
      if (!history) history = TuningHistory{};
      history->runs[query.checkpoint_dir] = **run;
    }
  }
  AttemptValue value = ValueForAttempt(*inputs, history, query);
  if (value.keep_as_written) {  // a pod of an attempt graintune already set
    plan.outcome = PlanOutcome::kKeptAsWritten;
    return plan;
  }
  plan.attempt = value.attempt;
  plan.workers = value.workers;
  plan.reason = std::move(value.reason);
  plan.decision = std::move(value.decision);
  if (plan.decision) plan.learned_from = inputs->learned_from;  // else the value is its own history's

  const bool has_eval = std::any_of(found.begin(), found.end(), [](const TemplateSites& t) {
    return std::any_of(t.edits.begin(), t.edits.end(), [](const Edit& e) { return IsEvalKey(e.key); });
  });
  if (has_eval) {
    const WorkerSplit split = SplitWithEval(plan.workers, ComputeBudgets(*inputs).ceiling);
    plan.workers = split.workers;
    plan.eval_workers = split.eval_workers;
  }

  if (policy.mode == Mode::kOff) {
    plan.warnings.push_back("graintune: policy mode Off: would set grain_worker_count=" +
                            std::to_string(plan.workers) + " (" + plan.reason + ")");
    plan.outcome = PlanOutcome::kRecommendOnly;
    return plan;
  }

  // Reinvocation (or a pod made from a template graintune already set) with the same value
  // for the same attempt keeps the reason it was given: the value's story does not change
  // because a later look would word it differently (e.g. without "attempt 0 ended").
  auto given = [&](const char* key) {
    auto it = object_annotations.find(key);
    return it == object_annotations.end() ? std::string() : it->second;
  };
  if (given(workload::kWorkerCountAnnotation) == std::to_string(plan.workers) &&
      given(workload::kAttemptAnnotation) == std::to_string(plan.attempt) &&
      !given(workload::kReasonAnnotation).empty())
    plan.reason = given(workload::kReasonAnnotation);

  if (budget && !budget->Charge(0)) {
    plan.warnings = {budget->Warning()};
    plan.outcome = PlanOutcome::kOverBudget;
    return plan;
  }
  const std::string object_name = ObjectName(object, kind);
  plan.touched = Touches(kind, found, exporter);
  const json before = CopyTouched(object, plan.touched);
  std::map<std::string, std::string> applied = {
      {workload::kWorkerCountAnnotation, std::to_string(plan.workers)},
      {workload::kReasonAnnotation, plan.reason},
      {workload::kAttemptAnnotation, std::to_string(plan.attempt)}};
  if (has_eval) applied[workload::kEvalWorkerCountAnnotation] = std::to_string(plan.eval_workers);
  applied[workload::kResumeAnnotation] = plan.resume.pins_workers ? workload::kPinsWorkers : "free";
  if (!plan.resume.checkpoint_dir.empty())
    applied[workload::kCheckpointDirAnnotation] = plan.resume.checkpoint_dir;
  if (plan.resume.steps) applied[workload::kStepsAnnotation] = std::to_string(*plan.resume.steps);
  if (failures_counted > 0)
    applied[workload::kFailedPodsCountedAnnotation] = std::to_string(failures_counted);
  // Where learned figures came from; cleared on an object that carries an earlier pick's.
  if (!plan.learned_from.empty() || object_annotations.count(workload::kLearnedFromAnnotation))
    applied[workload::kLearnedFromAnnotation] = workload::JoinLearnedFrom(plan.learned_from);
  // A JobSet's templates get the first attempt's value like a Job's, so that its pods never
  // start with -1 (Grain's own pick) when the webhook cannot answer for a restart; its child
  // Jobs and pods re-pick that value for every later attempt (the sites hold graintune's
  // value for attempt 0, which no longer applies to them).
  ApplyToTemplates(object, object_name, found, applied, exporter, plan);
  // A tuned Job carries the managed label too: the webhook watches only those Jobs (a plain
  // Job's failed pods number its retries' attempts).
  if (kind == WorkloadKind::kJob) Annotate(object, "/metadata", applied, {{workload::kManagedLabel, "true"}});
  if (kind == WorkloadKind::kJobSet) {
    // The JobSet's inputs (dataset, rates, tuning key) travel to its child Jobs, which the
    // JobSet controller makes from these templates without the JobSet's own annotations.
    for (const TemplateSites& t : found) Annotate(object, JobMetadataOf(t.ref), t.input_annotations, {});
    Annotate(object, "/metadata",
             {{workload::kFirstAttemptAnnotation, std::to_string(plan.workers)},
              {workload::kReasonAnnotation, plan.reason}},
             {});
    plan.warnings.push_back(
        "graintune: grain_worker_count=-1 will be " + std::to_string(plan.workers) +
        " for the first attempt (" + plan.reason + "); " +
        (plan.resume.pins_workers
             ? "every restart keeps it: " + plan.resume.why
             : "each restart is re-picked (" + plan.resume.why +
                   "), and starts with this value if graintune cannot answer"));
  }
  plan.patch = ScopedPatch(before, object, plan.touched);
  plan.changed = !plan.patch.empty();
  plan.outcome = PlanOutcome::kTuned;
  return plan;
}

}  // namespace

std::string ToString(PlanOutcome outcome) {
  switch (outcome) {
    case PlanOutcome::kNothingToTune: return "NothingToTune";
    case PlanOutcome::kTuned: return "Tuned";
    case PlanOutcome::kDeferred: return "Deferred";
    case PlanOutcome::kRecommendOnly: return "RecommendOnly";
    case PlanOutcome::kKeptAsWritten: return "KeptAsWritten";
    case PlanOutcome::kOverBudget: return "OverBudget";
  }
  return "NothingToTune";
}

Plan PlanWorkerCount(json object, WorkloadKind kind, const std::string& ns, PlannerSources sources,
                     const ExporterInjection* exporter, WorkBudget* budget) {
  Plan plan = PlanInPlace(object, kind, ns, sources, exporter, budget);
  plan.mutated = std::move(object);
  return plan;
}

}  // namespace graintune::webhook
