#include "webhook/worker_count_planner.h"

#include <algorithm>

#include "webhook/lap_injection.h"
#include "webhook/planner_attempt.h"
#include "webhook/planner_launcher.h"
#include "webhook/planner_maxtext_fit.h"
#include "webhook/planner_sites.h"
#include "webhook/scoped_patch.h"
#include "workload/identity.h"
#include "workload/tuning_inputs.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {
namespace {

using namespace planner;  // the planner's parts: webhook/planner_*.h

// Names in plan.findings, with value -1 and why, the -1s of `t` graintune leaves to MaxText: its
// kLeave edits, or (`all`) every edit, for `why`.
void AddLeftFindings(const std::string& object_name, const TemplateSites& t, bool all, const std::string& why,
                     Plan& plan) {
  for (const Edit& e : t.edits) {
    if (!all && e.op != Edit::Op::kLeave) continue;
    Finding f{object_name, e.container_name, e.site, e.key, e.container_pointer + e.pointer, e.before, -1,
              e.op == Edit::Op::kLeave ? e.left_why : why, {}, std::nullopt};
    for (const ContainerSites& c : t.containers)
      if (c.pointer == e.container_pointer) f.resume = c.resume;
    plan.findings.push_back(std::move(f));
  }
}

// A JobSet keeps -1 in its spec (child Jobs are tuned at their creation) and announces the
// value its first attempt will get.
// A Pod or Job gets the value written into every site, the applied annotations, the managed
// label and (when configured) the exporter sidecar. `fill_at_start`: nothing is written (each -1
// is left, with plan.reason where no edit says why), and the trainer starts through the start
// check, which fills its -1 with plan.workers.
void ApplyToTemplates(json& object, const std::string& object_name,
                      const std::vector<TemplateSites>& found,
                      const std::map<std::string, std::string>& applied,
                      const ExporterInjection* exporter, const std::optional<LapSettings>& lap,
                      bool start_check, bool fill_at_start, Plan& plan) {
  for (const TemplateSites& t : found) {
    const std::vector<Edit> writable = fill_at_start ? std::vector<Edit>{} : WritableEdits(t.edits);
    if (fill_at_start) AddLeftFindings(object_name, t, /*all=*/true, plan.reason, plan);
    for (const AppliedEdit& a : ApplyEdits(object, writable, [&](const Edit& e) {
           return IsEvalKey(e.key) ? plan.eval_workers : plan.workers;
         })) {
      Finding f{object_name, a.edit.container_name, a.edit.site, a.edit.key,
                a.pointer,   a.edit.before,         a.value, {}, {}, std::nullopt};
      for (const ContainerSites& c : t.containers)
        if (c.pointer == a.edit.container_pointer) f.resume = c.resume;
      plan.findings.push_back(std::move(f));
    }
    if (!fill_at_start) AddLeftFindings(object_name, t, /*all=*/false, "", plan);
    // The inputs travel to the pods, where the operator reads them (and learns per dataset).
    std::map<std::string, std::string> template_annotations = t.input_annotations;
    for (const auto& [k, v] : applied) template_annotations[k] = v;
    Annotate(object, t.ref.metadata_pointer, template_annotations,
             {{workload::kManagedLabel, "true"}});
    if (exporter) {
      const ContainerSites& trainer = DecidingContainer(t);
      InjectExporter(object, t.ref.spec_pointer, t.ref.metadata_pointer, trainer.pointer,
                     trainer.overrides, *exporter, plan.warnings);
      WrapTrainer(object, found, t, trainer, *exporter, lap, start_check, fill_at_start, plan);
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
                                            DecidingContainer(t).pointer))
        touched.push_back(std::move(p));
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

// The warning for a workload whose inputs cannot be read yet.
std::string DeferredWarning(const std::string& error, WorkloadKind kind) {
  // A workload queued by Kueue gets its node selector at admission, after this CREATE: its
  // pods (or a JobSet's child Jobs) are looked at again when they are created.
  return "graintune: " + error +
         (kind == WorkloadKind::kPod
              ? "; grain_worker_count left as written (MaxText picks for -1)"
              : "; left as written for now: its pods are tuned when created if they select TPU "
                "hosts by then (as after Kueue's admission), else MaxText picks for -1");
}

// Reinvocation (or a pod made from a template graintune already set) with the same value for
// the same attempt keeps the reason and the sources it was given: the value's story does not
// change because a later look would word it differently (e.g. without "attempt 0 ended") or
// would find it in the run's own pinned value rather than in learned figures.
void KeepGivenStory(const std::map<std::string, std::string>& object_annotations, Plan& plan) {
  auto given = [&](const char* key) {
    auto it = object_annotations.find(key);
    return it == object_annotations.end() ? std::string() : it->second;
  };
  if (given(workload::kWorkerCountAnnotation) != std::to_string(plan.workers) ||
      given(workload::kAttemptAnnotation) != std::to_string(plan.attempt) ||
      given(workload::kReasonAnnotation).empty())
    return;
  plan.reason = given(workload::kReasonAnnotation);
  if (plan.learned_from.empty())
    plan.learned_from = workload::SplitLearnedFrom(given(workload::kLearnedFromAnnotation));
}

// The graintune.dev/ annotations that record `plan` on the object and its templates.
std::map<std::string, std::string> AppliedAnnotations(
    const Plan& plan, const std::map<std::string, std::string>& object_annotations, bool has_eval,
    std::optional<long> hosts_read, int failures_counted) {
  std::map<std::string, std::string> applied = {
      {workload::kWorkerCountAnnotation, std::to_string(plan.workers)},
      {workload::kReasonAnnotation, plan.reason},
      {workload::kAttemptAnnotation, std::to_string(plan.attempt)}};
  if (has_eval) applied[workload::kEvalWorkerCountAnnotation] = std::to_string(plan.eval_workers);
  if (hosts_read) applied[workload::kDataHostsAnnotation] = std::to_string(*hosts_read);
  applied[workload::kResumeAnnotation] = plan.resume.pins_workers ? workload::kPinsWorkers : "free";
  if (!plan.resume.checkpoint_dir.empty())
    applied[workload::kCheckpointDirAnnotation] = plan.resume.checkpoint_dir;
  if (plan.resume.steps) applied[workload::kStepsAnnotation] = std::to_string(*plan.resume.steps);
  if (failures_counted > 0)
    applied[workload::kFailedPodsCountedAnnotation] = std::to_string(failures_counted);
  // Where learned figures came from; cleared on an object that carries an earlier pick's.
  if (!plan.learned_from.empty() || object_annotations.count(workload::kLearnedFromAnnotation))
    applied[workload::kLearnedFromAnnotation] = workload::JoinLearnedFrom(plan.learned_from);
  return applied;
}

// Writes `plan`'s value into every site of `object` with `applied` (and the JobSet's note to
// its child Jobs), then sets plan.patch to what changed.
void WritePlan(json& object, WorkloadKind kind, const std::vector<TemplateSites>& found,
               const ExporterInjection* exporter, const std::optional<LapSettings>& lap, bool start_check,
               bool fill_at_start, const std::map<std::string, std::string>& applied, Plan& plan) {
  const std::string object_name = ObjectName(object, kind);
  plan.touched = Touches(kind, found, exporter);
  const json before = CopyTouched(object, plan.touched);
  // A JobSet's templates get the first attempt's value like a Job's, so that its pods never
  // start with -1 (Grain's own pick) when the webhook cannot answer for a restart; its child
  // Jobs and pods re-pick that value for every later attempt (the sites hold graintune's
  // value for attempt 0, which no longer applies to them).
  ApplyToTemplates(object, object_name, found, applied, exporter, lap, start_check, fill_at_start, plan);
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
        (fill_at_start ? "graintune: grain_worker_count=-1 is left as written; graintune's start check starts the "
                         "first attempt's trainer with " + std::to_string(plan.workers) +
                         " unless its checkpoint saved a count or MaxText accepts fewer ("
                       : "graintune: grain_worker_count=-1 will be " + std::to_string(plan.workers) +
                             " for the first attempt (") +
        plan.reason + "); " +
        (plan.resume.pins_workers
             ? "every restart keeps it: " + plan.resume.why
             : "each restart is re-picked (" + plan.resume.why +
                   "), and starts with this value if graintune cannot answer"));
  }
  plan.patch = ScopedPatch(before, object, plan.touched);
  plan.changed = !plan.patch.empty();
}

Plan OverBudget(Plan plan, const WorkBudget& budget) {
  plan.warnings = {budget.Warning()};
  plan.outcome = PlanOutcome::kOverBudget;
  return plan;
}

// Where graintune writes nothing: every -1 of `found` named as found and left to MaxText, with
// `why` where an edit does not say its own (empty: the first edit's why is the plan's reason),
// unless the start check can fill them. True when the plan ends there (outcome LeftToMaxText).
bool LeaveToMaxText(const json& object, WorkloadKind kind, const std::vector<TemplateSites>& found,
                    const Policy& policy, const ExporterInjection* exporter, const std::string& why, Plan& plan) {
  if (StartCheckCanFill(object, found, policy, exporter)) return false;
  for (const TemplateSites& t : found) AddLeftFindings(ObjectName(object, kind), t, true, why, plan);
  if (why.empty()) plan.reason = plan.findings.front().left;
  plan.outcome = PlanOutcome::kLeftToMaxText;
  return true;
}

// A limit of MaxText that FitToMaxText could not tell (plan.reason says which) is left to the start
// check, which lowers the value to what MaxText accepts as it reads the start: the warning
// FitToMaxText left says so instead of "MaxText picks", and the reason keeps how the value was
// decided (`decided_reason`) before the limit.
void LeaveToStartCheck(const std::string& decided_reason, Plan& plan) {
  if (!plan.warnings.empty())
    plan.warnings.back() = "graintune: grain_worker_count left as written: " + plan.reason +
                           "; the start check gives the trainer no more than MaxText accepts for what it reads";
  plan.reason = decided_reason + "; " + plan.reason;
}

// The outcome of a plan WritePlan wrote: tuned; or, with nothing written (`fill_at_start`), left
// to the start check where it wraps a -1, else to MaxText.
PlanOutcome WrittenOutcome(bool fill_at_start, const Plan& plan) {
  if (!fill_at_start) return PlanOutcome::kTuned;
  return std::any_of(plan.findings.begin(), plan.findings.end(), [](const Finding& f) { return f.start_fill.has_value(); })
             ? PlanOutcome::kLeftToStartCheck
             : PlanOutcome::kLeftToMaxText;
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
  if (budget && !budget->exceeded().empty()) return OverBudget(std::move(plan), *budget);
  if (found.empty()) return plan;
  // Every -1 found is one graintune cannot rewrite: named as found, left as written; MaxText
  // picks it, unless the start check can fill it (StartCheckCanFill).
  bool fill_at_start = std::none_of(found.begin(), found.end(), [](const TemplateSites& t) {
    return std::any_of(t.edits.begin(), t.edits.end(), Writes);
  });
  if (fill_at_start && LeaveToMaxText(object, kind, found, policy, exporter, "", plan)) return plan;

  // One value for the whole workload, decided from its trainer: each container read its own
  // config; an init container, a sidecar or an ahead-of-time compile never decides for it.
  const auto [primary_template, trainer] = DecidingContainer(found);
  const TemplateSites& primary = *primary_template;
  Result<TuningInputs> inputs = workload::BuildTuningInputs(
      object.at(json::json_pointer(primary.ref.spec_pointer)), *trainer->container,
      trainer->overrides, trainer->config ? &*trainer->config : nullptr, primary.annotations, policy,
      workload::InputSources{sources.shapes, &sources.history, ns}, plan.warnings);
  if (!inputs.ok()) {
    plan.warnings.push_back(DeferredWarning(inputs.error(), kind));
    plan.outcome = PlanOutcome::kDeferred;
    return plan;
  }
  plan.host = inputs->host;
  plan.tuning_key = workload::TuningKeyOf(object, kind);
  plan.demand_key = inputs->demand.transfer_key;
  plan.resume = trainer->resume;  // whether this attempt may restore Grain's iterator

  AttemptQuery query = QueryFor(object_meta, object_labels, kind, found, primary, *trainer);
  int failures_counted = 0;
  if (kind == WorkloadKind::kPod && sources.jobs && !query.has_restart_label)
    failures_counted = CountJobRetries(object_meta, object_labels, ns, *sources.jobs, query);
  const std::optional<TuningHistory> history =
      HistoryOf(sources.history, ns, plan.tuning_key, query, plan.warnings);
  AttemptValue value = ValueForAttempt(*inputs, history, query);
  if (value.keep_as_written) {  // a pod of an attempt graintune already set
    plan.outcome = PlanOutcome::kKeptAsWritten;
    if (kind == WorkloadKind::kPod) AnswerNoLap(object, value.attempt, plan);
    return plan;
  }
  plan.attempt = value.attempt;
  plan.workers = value.workers;
  plan.reason = std::move(value.reason);
  plan.decision = std::move(value.decision);
  if (plan.decision) plan.learned_from = inputs->learned_from;  // else the value is its own history's

  const bool has_eval = HasEvalSite(found);
  std::optional<long> hosts_annotated;
  const std::string decided_reason = plan.reason;
  if (!FitToMaxText(object, kind, primary, *trainer, *inputs, has_eval, plan, hosts_annotated)) {
    if (!fill_at_start && LeaveToMaxText(object, kind, found, policy, exporter, plan.reason, plan)) return plan;
    LeaveToStartCheck(decided_reason, plan);
    fill_at_start = true;
  }

  if (policy.mode == Mode::kOff) {
    plan.warnings.push_back("graintune: policy mode Off: would set grain_worker_count=" +
                            std::to_string(plan.workers) + " (" + plan.reason + ")");
    plan.outcome = PlanOutcome::kRecommendOnly;
    return plan;
  }
  KeepGivenStory(object_annotations, plan);
  if (budget && !budget->Charge(0)) return OverBudget(std::move(plan), *budget);
  const std::optional<LapSettings> lap =
      fill_at_start ? std::nullopt
                    : LapFor(policy, *inputs, ns, *trainer, exporter, DataHosts(object, kind, primary), plan);
  WritePlan(object, kind, found, exporter, lap, policy.start_check, fill_at_start,
            AppliedAnnotations(plan, object_annotations, has_eval, hosts_annotated, failures_counted), plan);
  plan.outcome = WrittenOutcome(fill_at_start, plan);
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
    case PlanOutcome::kLeftToMaxText: return "LeftToMaxText";
    case PlanOutcome::kLeftToStartCheck: return "LeftToStartCheck";
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
