#include "webhook/worker_count_planner.h"

#include <charconv>

#include <algorithm>
#include <cmath>

#include "webhook/mounted_config.h"
#include "webhook/scoped_patch.h"
#include "webhook/site_finders.h"
#include "webhook/tuning_inputs_builder.h"
#include "webhook/workload_annotations.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;
constexpr size_t kMaxReasonBytes = 1024;

std::string MetaString(const json& object, const std::string& field) {
  const json::json_pointer p("/metadata/" + field);
  return object.contains(p) && object.at(p).is_string() ? object.at(p).get<std::string>() : "";
}

std::string ObjectName(const json& object, WorkloadKind kind) {
  std::string name = MetaString(object, "name");
  if (name.empty()) name = MetaString(object, "generateName") + "*";
  return ToString(kind) + " " + name;
}

// Applies one edit to `object`; returns the absolute pointer it changed.
std::string Apply(json& object, const Edit& e, int value) {
  const std::string text = std::to_string(value);
  switch (e.op) {
    case Edit::Op::kReplaceRange: {
      json& s = object[json::json_pointer(e.container_pointer + e.pointer)];
      std::string str = s.get<std::string>();
      str.replace(e.begin, e.end - e.begin, text);
      s = str;
      return e.container_pointer + e.pointer;
    }
    case Edit::Op::kInsertText: {
      json& s = object[json::json_pointer(e.container_pointer + e.pointer)];
      std::string str = s.get<std::string>();
      str.insert(e.begin, " " + e.key + "=" + text);
      s = str;
      return e.container_pointer + e.pointer;
    }
    case Edit::Op::kInsertArg: {
      // pointer is /args/N or /command/N: insert after N.
      const size_t slash = e.pointer.rfind('/');
      const std::string array = e.pointer.substr(0, slash);
      const long index = std::stol(e.pointer.substr(slash + 1));
      json& arr = object[json::json_pointer(e.container_pointer + array)];
      arr.insert(arr.begin() + index + 1, e.key + "=" + text);
      return e.container_pointer + array + "/" + std::to_string(index + 1);
    }
    case Edit::Op::kAppendEnv: {
      json& env = object[json::json_pointer(e.container_pointer + "/env")];
      if (!env.is_array()) env = json::array();
      env.push_back({{"name", EnvNameForKey(e.key)}, {"value", text}});
      return e.container_pointer + "/env/" + std::to_string(env.size() - 1);
    }
  }
  return e.container_pointer;
}

void Annotate(json& object, const std::string& metadata_pointer,
              const std::map<std::string, std::string>& annotations,
              const std::map<std::string, std::string>& labels, std::vector<std::string>& touched) {
  if (annotations.empty() && labels.empty()) return;  // leave the object exactly as written
  touched.push_back(metadata_pointer);
  json& meta = object[json::json_pointer(metadata_pointer)];
  if (!meta.is_object()) meta = json::object();
  for (const auto& [k, v] : annotations) meta["annotations"][k] = v;
  for (const auto& [k, v] : labels) meta["labels"][k] = v;
}

// What a missing metadata block reads as: one shared empty object, so a reference can always
// be returned.
const json& EmptyObject() {
  static const json kEmpty = json::object();
  return kEmpty;
}

const json& MetadataOf(const json& object) {
  if (!object.is_object()) return EmptyObject();
  auto it = object.find("metadata");
  return it != object.end() ? *it : EmptyObject();
}

}  // namespace

int AttemptOf(const json& metadata) {
  int attempt = 0;
  for (const auto& [field, key] : {std::pair{"labels", kRestartAttemptLabel},
                                   std::pair{"annotations", kAttemptAnnotation}}) {
    if (const std::string* value = StringEntry(metadata, field, key)) {
      int v = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), v);
      if (ec == std::errc() && ptr == value->data() + value->size() && v > attempt) attempt = v;
    }
  }
  return attempt;
}

std::string TuningKeyOf(const json& object, WorkloadKind kind) {
  const json& meta = MetadataOf(object);
  if (const std::string* key = StringEntry(meta, "annotations", kTuningKeyAnnotation)) return *key;
  // A JobSet is its own key; a Job learns under its JobSet; a Pod under its JobSet or Job.
  std::vector<std::string> owners;
  if (kind == WorkloadKind::kJob) owners = {"jobset.sigs.k8s.io/jobset-name"};
  if (kind == WorkloadKind::kPod)
    owners = {"jobset.sigs.k8s.io/jobset-name", "batch.kubernetes.io/job-name", "job-name"};
  for (const std::string& owner : owners) {
    if (const std::string* name = StringEntry(meta, "labels", owner)) return *name;
  }
  std::string name = MetaString(object, "name");
  if (name.empty()) name = MetaString(object, "generateName");
  return name;
}

Plan PlanWorkerCount(const json& object, WorkloadKind kind, const std::string& ns,
                     PlannerSources sources, const ExporterInjection* exporter) {
  Plan plan;
  plan.mutated = object;
  if (!object.is_object()) return plan;
  const json& object_meta = MetadataOf(object);
  const std::map<std::string, std::string> object_labels = StringMap(object_meta, "labels");
  const std::map<std::string, std::string> object_annotations = StringMap(object_meta, "annotations");
  const Policy policy = sources.policies.PolicyFor(ns, object_labels);

  struct Found {
    PodTemplateRef ref;
    std::vector<Edit> edits;
    WorkloadAnnotations annotations;  // the object's merged over this template's
    std::map<std::string, std::string> input_annotations;  // the graintune.dev/ inputs among them
    ContainerOverrides overrides;  // of the first container with an edit
    std::optional<ConfigValues> config;
    const json* container = nullptr;  // in `object`
  };
  std::vector<Found> found;
  for (const PodTemplateRef& ref : LocatePodTemplates(object, kind)) {
    const json& spec = object.at(json::json_pointer(ref.spec_pointer));
    const json::json_pointer meta_pointer(ref.metadata_pointer);
    const json& template_meta = object.contains(meta_pointer) ? object.at(meta_pointer) : EmptyObject();
    std::map<std::string, std::string> annotations = StringMap(template_meta, "annotations");
    for (const auto& [k, v] : object_annotations) annotations[k] = v;
    std::vector<std::string> annotation_warnings;
    const WorkloadAnnotations wa = ParseWorkloadAnnotations(annotations, annotation_warnings);
    for (const std::string& w : annotation_warnings) {
      if (std::find(plan.warnings.begin(), plan.warnings.end(), w) == plan.warnings.end())
        plan.warnings.push_back(w);
    }
    const std::map<std::string, std::string> labels = StringMap(template_meta, "labels");
    const bool managed = labels.count(kManagedLabel) && labels.at(kManagedLabel) == "true";

    Found f;
    f.ref = ref;
    f.annotations = wa;
    for (const auto& [k, v] : annotations)
      if (IsInputAnnotation(k)) f.input_annotations[k] = v;
    for (const char* list : {"initContainers", "containers"}) {
      if (!spec.contains(list) || !spec[list].is_array()) continue;
      for (size_t i = 0; i < spec[list].size(); ++i) {
        const json& c = spec[list][i];
        if (!c.is_object()) continue;
        ContainerOverrides overrides = ScanContainer(c);
        std::optional<ConfigValues> config;
        if (overrides.config) {
          Result<std::optional<ConfigValues>> loaded = LoadMountedConfig(
              spec, c, overrides.config->path, ns, sources.configmaps);
          if (!loaded.ok()) plan.warnings.push_back("graintune: " + loaded.error());
          else config = *loaded;
        }
        const std::string pointer = ref.spec_pointer + "/" + list + "/" + std::to_string(i);
        const ContainerContext ctx{c,      pointer, c.value("name", ""), overrides,
                                   config ? &*config : nullptr, wa, managed, policy};
        const size_t before = f.edits.size();
        for (const auto& finder : DefaultSiteFinders()) finder->Find(ctx, f.edits, plan.warnings);
        if (f.edits.size() > before && !f.container) {
          f.overrides = overrides;
          f.config = config;
          f.container = &c;
        }
      }
    }
    if (!f.edits.empty()) found.push_back(std::move(f));
  }
  if (found.empty()) return plan;

  // One value for the whole workload, decided from its first MaxText container.
  const Found& primary = found.front();
  const json& primary_spec = object.at(json::json_pointer(primary.ref.spec_pointer));
  std::vector<std::string> input_warnings;
  Result<TuningInputs> inputs = BuildTuningInputs(
      primary_spec, *primary.container, primary.overrides, primary.config ? &*primary.config : nullptr,
      primary.annotations, policy, InputSources{sources.shapes, sources.history}, input_warnings);
  plan.warnings.insert(plan.warnings.end(), input_warnings.begin(), input_warnings.end());
  if (!inputs.ok()) {
    // A workload queued by Kueue gets its node selector at admission, after this CREATE: its
    // pods (or a JobSet's child Jobs) are looked at again when they are created.
    plan.warnings.push_back(
        "graintune: " + inputs.error() +
        (kind == WorkloadKind::kPod
             ? "; grain_worker_count left as written (MaxText picks for -1)"
             : "; left as written for now: its pods are tuned when created if they select TPU "
               "hosts by then (as after Kueue's admission), else MaxText picks for -1"));
    return plan;
  }
  plan.host = inputs->host;
  plan.inputs = *inputs;
  plan.tuning_key = TuningKeyOf(object, kind);
  plan.attempt = AttemptOf(object_meta);
  // A plain Job's pod created after some of its pods failed is a retry: the next attempt(s).
  if (kind == WorkloadKind::kPod && sources.jobs && !object_labels.count(kRestartAttemptLabel)) {
    auto job = object_labels.find("batch.kubernetes.io/job-name");
    if (job == object_labels.end()) job = object_labels.find("job-name");
    if (job != object_labels.end())
      if (std::optional<int> failed = sources.jobs->FailedPods(ns, job->second); failed && *failed > 0)
        plan.attempt += *failed;
  }

  std::optional<TuningHistory> history;
  if (Result<std::optional<TuningHistory>> h = sources.history.Lookup(ns, plan.tuning_key); h.ok()) {
    history = *h;
  } else {
    plan.warnings.push_back("graintune: history unavailable (" + h.error() +
                            "); deciding without earlier trials");
  }
  // A run of an attempt whose pods are all gone is a new attempt: Kueue preempted and
  // re-admitted the workload, or it was resubmitted under the same tuning key. It gets the
  // attempt the recommendation is for (the late-pod rule below would give it the old value).
  std::string new_run;
  if (kind != WorkloadKind::kJobSet && history && history->ended_attempts.count(plan.attempt) &&
      history->recommendation_attempt > plan.attempt) {
    new_run = "attempt " + std::to_string(plan.attempt) + " ended; this run is attempt " +
              std::to_string(history->recommendation_attempt) + ". ";
    plan.attempt = history->recommendation_attempt;
  }
  const bool managed_only = std::all_of(found.begin(), found.end(), [](const Found& f) {
    return std::all_of(f.edits.begin(), f.edits.end(), [](const Edit& e) { return e.before != "-1" && e.before != "(unset)"; });
  });
  // A late pod of an attempt that was already measured keeps that attempt's value: all pods of
  // one attempt get one value.
  const Trial* measured = nullptr;
  if (history && history->recommendation_attempt > plan.attempt)
    for (const Trial& t : history->trials)
      if (t.attempt == plan.attempt) measured = &t;
  // Initial mode: the value of the first attempt is kept for every later one.
  const Trial* first_trial = nullptr;
  if (history && policy.mode == Mode::kInitial)
    for (const Trial& t : history->trials)
      if (!first_trial || t.attempt < first_trial->attempt) first_trial = &t;
  if (first_trial && !measured) {
    plan.workers = first_trial->workers;
    plan.reason = "policy mode Initial: keeps the value attempt " +
                  std::to_string(first_trial->attempt) + " was given (" +
                  std::to_string(first_trial->workers) + ")";
  } else if (measured) {
    plan.workers = measured->workers;
    plan.reason = "attempt " + std::to_string(plan.attempt) + " ran with " +
                  std::to_string(measured->workers) + " workers";
  } else if (history && history->recommended_workers &&
             (policy.mode != Mode::kInitial || history->recommendation_attempt == 0)) {
    // A plain Job's pod retry carries no attempt label: it is the attempt recommended for.
    if (!object_labels.count(kRestartAttemptLabel)) plan.attempt = history->recommendation_attempt;
    plan.workers = *history->recommended_workers;
    plan.reason = "attempt " + std::to_string(history->recommendation_attempt) + ": " +
                  history->recommendation_reason;
  } else if (managed_only) {
    return plan;  // a pod of an attempt graintune already set, nothing newer known: keep it
  } else {
    const Decision d = Decide(*inputs, history ? history->trials : std::vector<Trial>{});
    plan.decision = d;
    plan.workers = d.workers;
    plan.reason = d.reason;
  }
  plan.reason = new_run + plan.reason;
  if (plan.reason.size() > kMaxReasonBytes) plan.reason = plan.reason.substr(0, kMaxReasonBytes);

  // The eval pipeline's workers live beside the training workers: a quarter of the value,
  // and the two together stay within the budget.
  bool has_eval = false;
  for (const Found& f : found)
    for (const Edit& e : f.edits) has_eval = has_eval || IsEvalKey(e.key);
  if (has_eval) {
    plan.eval_workers = std::max(1, static_cast<int>(std::ceil(plan.workers / 4.0)));
    const int ceiling = ComputeBudgets(*inputs).ceiling;
    if (plan.workers + plan.eval_workers > ceiling)
      plan.workers = std::max(1, ceiling - plan.eval_workers);
  }

  if (policy.mode == Mode::kOff) {
    plan.warnings.push_back("graintune: policy mode Off: would set grain_worker_count=" +
                            std::to_string(plan.workers) + " (" + plan.reason + ")");
    return plan;
  }

  // Reinvocation (or a pod made from a template graintune already set) with the same value
  // for the same attempt keeps the reason it was given: the value's story does not change
  // because a later look would word it differently (e.g. without "attempt 0 ended").
  if (auto w = object_annotations.find(kWorkerCountAnnotation),
      a = object_annotations.find(kAttemptAnnotation), r = object_annotations.find(kReasonAnnotation);
      w != object_annotations.end() && a != object_annotations.end() &&
      r != object_annotations.end() && !r->second.empty() &&
      w->second == std::to_string(plan.workers) && a->second == std::to_string(plan.attempt))
    plan.reason = r->second;

  const std::string object_name = ObjectName(object, kind);
  std::map<std::string, std::string> applied = {
      {kWorkerCountAnnotation, std::to_string(plan.workers)}, {kReasonAnnotation, plan.reason},
      {kAttemptAnnotation, std::to_string(plan.attempt)}};
  if (has_eval) applied[kEvalWorkerCountAnnotation] = std::to_string(plan.eval_workers);

  if (kind == WorkloadKind::kJobSet) {
    // Keep -1 in the spec; child Jobs are tuned at their creation. Carry an annotation-only
    // request down to the pod templates so child Jobs see it.
    for (const Found& f : found) {
      for (const Edit& e : f.edits) {
        plan.findings.push_back({object_name + ", replicatedJob " + f.ref.name, e.container_name,
                                 e.kind, e.key, e.container_pointer + e.pointer, e.before,
                                 IsEvalKey(e.key) ? plan.eval_workers : plan.workers});
      }
      const bool annotation_only = std::all_of(f.edits.begin(), f.edits.end(), [](const Edit& e) {
        return e.kind == SiteKind::kAnnotation;
      });
      if (annotation_only && f.annotations.requests_tuning)
        Annotate(plan.mutated, f.ref.metadata_pointer, {{kWorkerCountAnnotation, "-1"}}, {},
                 plan.touched);
      // The JobSet's inputs (dataset, rates, tuning key) travel to its child Jobs, which the
      // JobSet controller makes from this template without the JobSet's own annotations: the
      // first attempt then gets exactly the value announced here, under the same key.
      const std::string job_metadata =
          f.ref.metadata_pointer.substr(0, f.ref.metadata_pointer.rfind("/spec/template/metadata")) +
          "/metadata";
      Annotate(plan.mutated, job_metadata, f.input_annotations, {}, plan.touched);
    }
    Annotate(plan.mutated, "/metadata",
             {{kFirstAttemptAnnotation, std::to_string(plan.workers)}, {kReasonAnnotation, plan.reason}},
             {}, plan.touched);
    plan.warnings.push_back("graintune: grain_worker_count=-1 will be " +
                            std::to_string(plan.workers) + " for the first attempt (" +
                            plan.reason + "); each restart is re-picked");
  } else {
    for (const Found& f : found) {
      // In-place edits first, later offsets of a string before earlier ones so offsets stay
      // valid; then argv insertions (they shift later indices); then env appends.
      std::vector<Edit> edits = f.edits;
      auto rank = [](const Edit& e) {
        return e.op == Edit::Op::kInsertArg ? 1 : e.op == Edit::Op::kAppendEnv ? 2 : 0;
      };
      std::stable_sort(edits.begin(), edits.end(), [&](const Edit& a, const Edit& b) {
        if (rank(a) != rank(b)) return rank(a) < rank(b);
        const std::string pa = a.container_pointer + a.pointer, pb = b.container_pointer + b.pointer;
        if (pa != pb) return pa < pb;
        return a.begin > b.begin;
      });
      for (const Edit& e : edits) {
        const int value = IsEvalKey(e.key) ? plan.eval_workers : plan.workers;
        const std::string pointer = Apply(plan.mutated, e, value);
        plan.touched.push_back(e.container_pointer);
        plan.findings.push_back({object_name, e.container_name, e.kind, e.key, pointer, e.before, value});
      }
      // The inputs travel to the pods, where the operator reads them (and learns per dataset).
      std::map<std::string, std::string> template_annotations = f.input_annotations;
      for (const auto& [k, v] : applied) template_annotations[k] = v;
      Annotate(plan.mutated, f.ref.metadata_pointer, template_annotations, {{kManagedLabel, "true"}},
               plan.touched);
      if (exporter && !f.edits.empty()) {
        plan.touched.push_back(f.ref.spec_pointer);
        plan.touched.push_back(f.ref.metadata_pointer);
        InjectExporter(plan.mutated, f.ref.spec_pointer, f.ref.metadata_pointer,
                       f.edits.front().container_pointer, f.overrides, *exporter, plan.warnings);
      }
    }
    if (kind == WorkloadKind::kJob) Annotate(plan.mutated, "/metadata", applied, {}, plan.touched);
  }
  plan.patch = ScopedPatch(object, plan.mutated, plan.touched);
  plan.changed = !plan.patch.empty();
  return plan;
}

}  // namespace graintune::webhook
