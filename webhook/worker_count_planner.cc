#include "webhook/worker_count_planner.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "base/numbers.h"
#include "contract/lap_answer_text.h"
#include "tuner/attempt_value.h"
#include "tuner/practice_lap.h"
#include "webhook/lap_injection.h"
#include "webhook/scoped_patch.h"
#include "webhook/site_finders.h"
#include "workload/identity.h"
#include "workload/maxtext_limits.h"
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

// The JobSet the object is or belongs to ("" when none).
std::string JobSetOf(const json& object, WorkloadKind kind) {
  return kind == WorkloadKind::kJobSet
             ? workload::MetadataString(object, "name")
             : workload::StringMap(workload::MetadataOf(object), "labels")[workload::kJobSetNameLabel];
}

// $JOBSET_NAME as MaxText will see it in `container`: its literal env, else (set from a field)
// the JobSet the object is or belongs to; "" when unset.
std::string JobSetNameFor(const json& object, WorkloadKind kind, const json& container) {
  const std::optional<std::string> env = workload::JobSetNameEnv(container);
  if (!env || !env->empty()) return env.value_or("");
  return JobSetOf(object, kind);
}

// The container that decides a run's value among `containers`: a container whose own config
// may restore Grain's iterator decides (its run keeps its value; holding it is never wrong for
// the others), a trainer before an init container, a sidecar or an ahead-of-time compile; else
// the first trainer; else the first. nullptr when empty.
const ContainerSites* DecidingContainer(const std::vector<const ContainerSites*>& containers) {
  auto trains = [](const ContainerSites& c) { return !c.init && !c.overrides.aot_compile_only; };
  auto pins = [](const ContainerSites& c) { return c.resume.pins_workers; };
  const std::function<bool(const ContainerSites&)> preferences[] = {
      [&](const ContainerSites& c) { return pins(c) && trains(c); }, pins, trains};
  for (const auto& wanted : preferences)
    for (const ContainerSites* c : containers)
      if (wanted(*c)) return c;
  return containers.empty() ? nullptr : containers.front();
}

const ContainerSites& DecidingContainer(const TemplateSites& t) {
  std::vector<const ContainerSites*> all;
  for (const ContainerSites& c : t.containers) all.push_back(&c);
  return *DecidingContainer(all);  // a TemplateSites is kept only with a container
}

// One container's sites, read with its own config and resume decision, into `t`.
void FindContainerSites(const json& object, WorkloadKind kind, const json& spec, const json& c,
                        std::string pointer, bool init, bool managed, const Policy& policy,
                        const std::string& ns, workload::ConfigMapSource& configmaps,
                        TemplateSites& t, std::vector<std::string>& warnings) {
  ContainerSites sites;
  // The container's env as its shell sees it: literals, its ConfigMaps, the JobSet's name.
  sites.env = workload::ResolveContainerEnv(c, ns, &configmaps, JobSetOf(object, kind));
  sites.overrides = workload::ScanContainer(c, &sites.env);
  if (sites.overrides.config) {
    Result<std::optional<workload::ConfigValues>> loaded =
        workload::LoadMountedConfig(spec, c, sites.overrides.config->path, ns, configmaps);
    if (!loaded.ok()) warnings.push_back("graintune: " + loaded.error());
    else sites.config = *loaded;
  }
  const workload::ConfigValues* config = sites.config ? &*sites.config : nullptr;
  const ContainerContext ctx{c,      pointer,  workload::StringField(c, "name"), sites.overrides,
                             config, t.annotations, managed,                       policy};
  const size_t before = t.edits.size();
  for (const auto& finder : SiteFinders()) finder->Find(ctx, t.edits, warnings);
  if (t.edits.size() == before) return;
  if (managed) {
    sites.applied_workers = t.annotations.applied_workers;
    sites.applied_eval_workers = t.annotations.applied_eval_workers;
  }
  sites.resume = workload::ResumeOf({sites.overrides, config,
                                     workload::ViewOfConfig(sites.overrides, config),
                                     JobSetNameFor(object, kind, c), sites.applied_workers,
                                     sites.applied_eval_workers});
  // Only the eval pipeline's count is graintune's here: MaxText's checkpoints hold the training
  // iterator alone, so the eval count may change at every restart (the training count is the
  // user's, as written).
  if (sites.resume.pins_workers &&
      std::all_of(t.edits.begin() + static_cast<std::ptrdiff_t>(before), t.edits.end(),
                  [](const Edit& e) { return IsEvalKey(e.key); })) {
    sites.resume.pins_workers = false;
    sites.resume.why = "only grain_worker_count_eval is computed: MaxText's checkpoints hold the "
                       "training iterator, not the eval pipeline's, so its count may change";
  }
  sites.container = &c;
  sites.pointer = std::move(pointer);
  sites.init = init;
  t.containers.push_back(std::move(sites));
}

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
        const size_t before = t.edits.size();
        FindContainerSites(object, kind, spec, c,
                           ref.spec_pointer + "/" + list + "/" + std::to_string(i),
                           std::string_view(list) == "initContainers", managed, policy, ns,
                           configmaps, t, warnings);
        if (budget && !budget->Charge(static_cast<int>(t.edits.size() - before))) return {};
      }
    }
    if (!t.containers.empty()) found.push_back(std::move(t));
  }
  return found;
}

std::pair<const TemplateSites*, const ContainerSites*> DecidingContainer(
    const std::vector<TemplateSites>& found);  // below

// `resolved` (the container's env as read before any edit) with the literal values as `container`
// now holds them: graintune's M_ value written, or appended.
workload::ContainerEnv EnvAsStored(const workload::ContainerEnv& resolved, const json& container) {
  workload::ContainerEnv env = resolved;
  for (workload::EnvVariable& v : env.variables)
    if (!v.pointer.empty())
      if (const json::json_pointer at(v.pointer); container.contains(at) && container.at(at).is_string())
        v.value = container.at(at).get<std::string>();
  const json list = container.value("env", json::array());
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    const std::string name = workload::StringField(list[i], "name");
    if (!workload::MaxTextKeyFromEnv(name).empty() && !env.Find(name) && list[i].contains("value") &&
        list[i]["value"].is_string())
      env.variables.push_back({name, list[i]["value"].get<std::string>(),
                               "/env/" + std::to_string(i) + "/value", "env"});
  }
  return env;
}

// The launcher's answer for attempt `attempt` > 0, set on the pod (template) metadata at
// `metadata_pointer` before its pods start: no lap, the trainer starts as written.
void AnnotateNoLap(json& object, const std::string& metadata_pointer, int attempt, Plan& plan) {
  plan.lap = "no practice lap: attempt " + std::to_string(attempt) + " continues its run";
  Annotate(object, metadata_pointer,
           {{kLapValueAnnotation, contract::FormatNoLapValue("attempt " + std::to_string(attempt) + " continues its run")}},
           {});
}

// The practice lap for the run's trainer `trainer` of template `t`, as written now (admission's
// value in place): the launcher wraps it (true), or plan.lap says why it gets none. Only beside
// the exporter, which measures the lap.
bool AddLap(json& object, const TemplateSites& t, const ContainerSites& trainer,
            const LapSettings& lap, const ExporterInjection& exporter, Plan& plan) {
  if (trainer.overrides.HasKey("metrics_file")) {  // no exporter (InjectExporter), so nothing measures it
    plan.lap = "no practice lap: the job sets metrics_file itself, so graintune cannot measure one";
    return false;
  }
  const json& container = object.at(json::json_pointer(trainer.pointer));
  const LapInjection options{.image = exporter.image, .metrics_dir = exporter.mount_path};
  const workload::ContainerEnv env = EnvAsStored(trainer.env, container);
  Result<std::vector<std::string>> flags =
      LauncherFlags(container, workload::ScanContainer(container, &env), lap, options);
  if (!flags.ok()) {
    plan.lap = "no practice lap: " + flags.error();
    return false;
  }
  InjectLauncher(object, t.ref.spec_pointer, trainer.pointer, *flags, LauncherRole::kLap, options);
  plan.lap = "a practice lap of " + std::to_string(lap.steps) + " steps with " +
             std::to_string(lap.admission_value) + " workers runs before the trainer (about " +
             std::to_string(static_cast<long>(lap.expected_seconds)) + " s at the estimated step, at most " +
             std::to_string(lap.timeout_seconds) + " s); the run then keeps the value its lap "
             "measured on every host, or this one";
  return true;
}

// graintune-launcher's flags that start `trainer` (its container as stored now: `container`)
// with the start check, or why they cannot: the job sets metrics_file itself (so no exporter was
// added to hear the check), or the container has no command of its own (StartCheckFlags).
Result<std::vector<std::string>> StartCheckFlagsFor(const ContainerSites& trainer, const json& container, int value,
                                                    const LapInjection& options, bool fills) {
  if (trainer.overrides.HasKey("metrics_file"))  // no exporter (InjectExporter) to report to
    return Status::Error("the job sets metrics_file itself, so no exporter was added to report it");
  return StartCheckFlags(container, value, options, fills);
}

// The start check for the trainer `trainer` of template `t` (policy spec.startCheck): the
// launcher starts it with the check in front of MaxText, which reports to the exporter (true);
// or plan.start_check says why it does not. `fills`: the -1s graintune leaves in it are started
// with plan.workers (StartCheckFlags).
bool AddStartCheck(json& object, const TemplateSites& t, const ContainerSites& trainer,
                   const ExporterInjection& exporter, bool fills, Plan& plan) {
  // An init-container trainer is never wrapped: the exporter's insertion into initContainers has
  // moved it (its pointer and address no longer hold it).
  if (trainer.init) return false;
  const std::string name = workload::StringField(*trainer.container, "name");
  const auto say = [&](const std::string& text) {
    if (plan.start_check.find(text) == std::string::npos)
      plan.start_check += (plan.start_check.empty() ? "" : "; ") + text;
  };
  const LapInjection options{.image = exporter.image, .metrics_dir = exporter.mount_path};
  const json& container = object.at(json::json_pointer(trainer.pointer));
  Result<std::vector<std::string>> flags = StartCheckFlagsFor(trainer, container, plan.workers, options, fills);
  if (!flags.ok()) {
    say("no start check for " + name + ": " + flags.error());
    return false;
  }
  InjectLauncher(object, t.ref.spec_pointer, trainer.pointer, *flags, LauncherRole::kStartCheck, options);
  say(name + " starts through graintune-launcher with the start check: a resuming run gets "
      "the count its checkpoint saved, and MaxText is never given a count it refuses" +
      (fills ? "; where the start leaves the count to MaxText (-1), it starts with " + std::to_string(plan.workers) +
                   ", or fewer where MaxText accepts fewer"
             : std::string()));
  return true;
}

// The -1s of the container at `trainer_pointer` among plan.findings get the value the start
// check starts them with (the training count only: the check sets nothing else).
void NoteStartFill(const std::string& trainer_pointer, Plan& plan) {
  for (Finding& f : plan.findings)
    if (f.value == -1 && !IsEvalKey(f.key) &&
        (f.pointer == trainer_pointer || f.pointer.starts_with(trainer_pointer + "/")))
      f.start_fill = plan.workers;
}

bool Writes(const Edit& e) { return e.op != Edit::Op::kLeave; }

// The edits that write something (a kLeave edit names a -1 graintune cannot rewrite).
std::vector<Edit> WritableEdits(const std::vector<Edit>& edits) {
  std::vector<Edit> writable;
  for (const Edit& e : edits)
    if (Writes(e)) writable.push_back(e);
  return writable;
}

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
      const std::optional<LauncherRole> carried = LauncherRoleOf(object.at(json::json_pointer(t.ref.spec_pointer)));
      if (carried == LauncherRole::kLap) {  // from its JobSet's template
        if (plan.attempt > 0) AnnotateNoLap(object, t.ref.metadata_pointer, plan.attempt, plan);
        else plan.lap = "a practice lap runs before the trainer (its template carries graintune-launcher)";
      } else if (carried == LauncherRole::kStartCheck) {
        // This attempt's value, in place of the one its template was wrapped with.
        if (SetStartCheckValue(object[json::json_pointer(trainer.pointer)], plan.workers) && fill_at_start)
          NoteStartFill(trainer.pointer, plan);
        plan.start_check = "the trainer starts with the start check (its template carries graintune-launcher)";
      } else if (!(!fill_at_start && lap && &trainer == DecidingContainer(found).second &&
                   AddLap(object, t, trainer, *lap, *exporter, plan)) &&
                 start_check && AddStartCheck(object, t, trainer, *exporter, fill_at_start, plan) &&
                 fill_at_start) {
        NoteStartFill(trainer.pointer, plan);
      }
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

// The run's deciding container across all templates (DecidingContainer above), with its
// template.
std::pair<const TemplateSites*, const ContainerSites*> DecidingContainer(
    const std::vector<TemplateSites>& found) {
  std::vector<const ContainerSites*> all;
  for (const TemplateSites& t : found)
    for (const ContainerSites& c : t.containers) all.push_back(&c);
  const ContainerSites* trainer = DecidingContainer(all);
  for (const TemplateSites& t : found)
    for (const ContainerSites& c : t.containers)
      if (&c == trainer) return {&t, trainer};
  return {&found.front(), &found.front().containers.front()};
}

// A positive whole number at `pointer` in `object`, `absent` when it is not there; nullopt
// when it is something else.
std::optional<long> CountAt(const json& object, const std::string& pointer, long absent) {
  const json::json_pointer p(pointer);
  if (!object.contains(p)) return absent;
  const json& v = object.at(p);
  if (!v.is_number_integer() || v.get<long>() < 1 || v.get<long>() > 1000000) return std::nullopt;
  return v.get<long>();
}

// The processes that load data for the workload `t` belongs to (one per pod: a JobSet's
// replicatedJob replicas x its Job's parallelism, a Job's parallelism, a bare Pod 1), or what
// graintune wrote on the pod template of its Job or JobSet; nullopt when it cannot tell (a pod
// or Job made by a workload graintune did not see).
std::optional<long> DataHosts(const json& object, WorkloadKind kind, const TemplateSites& t) {
  if (t.annotations.data_hosts) return t.annotations.data_hosts;
  const std::map<std::string, std::string> labels =
      workload::StringMap(workload::MetadataOf(object), "labels");
  switch (kind) {
    case WorkloadKind::kJobSet: {
      const std::string job = t.ref.metadata_pointer.substr(
          0, t.ref.metadata_pointer.rfind("/spec/template/metadata"));
      const std::string replicated_job = job.substr(0, job.rfind("/template"));
      const std::optional<long> replicas = CountAt(object, replicated_job + "/replicas", 1);
      const std::optional<long> parallelism = CountAt(object, job + "/spec/parallelism", 1);
      if (!replicas || !parallelism) return std::nullopt;
      return *replicas * *parallelism;
    }
    case WorkloadKind::kJob:
      if (labels.count(workload::kJobSetNameLabel)) return std::nullopt;
      return CountAt(object, "/spec/parallelism", 1);
    case WorkloadKind::kPod:
      if (labels.count("batch.kubernetes.io/job-name") || labels.count("job-name")) return std::nullopt;
      return 1;
    default:
      return std::nullopt;
  }
}

// Caps plan.workers (and plan.eval_workers) at what the trainer's MaxText accepts
// (workload/maxtext_limits.h). False, with a warning, when a limit may apply that graintune
// cannot tell: -1 is then left to MaxText, which never refuses it. `hosts_read`: whether a
// limit came from the host count (its pods are then told it).
bool WithinMaxTextLimits(const ContainerSites& trainer, std::optional<long> data_files,
                         std::optional<long> hosts, bool has_eval, Plan& plan, bool& hosts_read) {
  const workload::ConfigValues* config = trainer.config ? &*trainer.config : nullptr;
  const workload::RunResumeQuery query{trainer.overrides,
                                       config,
                                       workload::ViewOfConfig(trainer.overrides, config),
                                       "",
                                       trainer.applied_workers,
                                       trainer.applied_eval_workers};
  for (const bool eval : {false, true}) {
    if (eval && !has_eval) continue;
    const workload::WorkerLimit limit = workload::MaxTextWorkerLimit({query, eval, data_files, hosts});
    int& workers = eval ? plan.eval_workers : plan.workers;
    hosts_read = hosts_read || limit.per_host;
    if (limit.kind == workload::WorkerLimit::Kind::kUnknown) {
      plan.warnings.push_back(std::string("graintune: ") + kWorkerCountKeys[eval ? 1 : 0] +
                              " left as written for MaxText to pick: " + limit.why);
      plan.reason = limit.why;
      return false;
    }
    if (limit.kind == workload::WorkerLimit::Kind::kAtMost && workers > limit.at_most) {
      workers = limit.at_most;
      plan.reason += "; " + std::to_string(limit.at_most) + (eval ? " eval" : "") +
                     " at most: " + limit.why;
    }
  }
  return true;
}

// The tuning key's history, with the run `query` resumes when another workload recorded it;
// nullopt (and a warning) when the source failed.
std::optional<TuningHistory> HistoryOf(workload::HistorySource& source, const std::string& ns,
                                       const std::string& tuning_key, const AttemptQuery& query,
                                       std::vector<std::string>& warnings) {
  std::optional<TuningHistory> history;
  if (Result<std::optional<TuningHistory>> h = source.Lookup(ns, tuning_key); h.ok()) {
    history = *h;
  } else {
    warnings.push_back("graintune: history unavailable (" + h.error() +
                       "); deciding without earlier trials");
  }
  // A run this key has not recorded may have been started by another workload.
  if (query.pins_workers && !query.checkpoint_dir.empty() &&
      query.checkpoint_dir.find('<') == std::string::npos &&
      !(history && history->runs.count(query.checkpoint_dir))) {
    if (Result<std::optional<RunRecord>> run = source.RunFor(ns, query.checkpoint_dir);
        run.ok() && *run) {
      if (!history) history = TuningHistory{};
      history->runs[query.checkpoint_dir] = **run;
    }
  }
  return history;
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

bool HasEvalSite(const std::vector<TemplateSites>& found) {
  return std::any_of(found.begin(), found.end(), [](const TemplateSites& t) {
    return std::any_of(t.edits.begin(), t.edits.end(), [](const Edit& e) { return IsEvalKey(e.key); });
  });
}

// Which attempt of which run the object is, as far as the object itself says: its attempt
// annotation or restart label, whether it only holds values graintune applied, and whether
// the run keeps its value (the trainer's resume decision).
AttemptQuery QueryFor(const json& object_meta, const std::map<std::string, std::string>& labels,
                      WorkloadKind kind, const std::vector<TemplateSites>& found,
                      const TemplateSites& primary, const ContainerSites& trainer) {
  AttemptQuery query;
  query.attempt = workload::AttemptOf(object_meta);
  query.has_restart_label = labels.count(workload::kRestartAttemptLabel) > 0;
  query.announces_first_attempt = kind == WorkloadKind::kJobSet;
  // (A -1 graintune cannot rewrite holds no value it applied: with nothing else, none was.)
  query.only_applied_values =
      std::any_of(found.begin(), found.end(),
                  [](const TemplateSites& t) { return std::any_of(t.edits.begin(), t.edits.end(), Writes); }) &&
      std::all_of(found.begin(), found.end(), [](const TemplateSites& t) {
        return std::all_of(t.edits.begin(), t.edits.end(),
                           [](const Edit& e) { return e.before != "-1" && e.before != "(unset)"; });
      });
  query.pins_workers = trainer.resume.pins_workers;
  query.checkpoint_dir = trainer.resume.checkpoint_dir;
  if (query.only_applied_values)
    for (const Edit& e : primary.edits)
      if (!IsEvalKey(e.key) && e.container_pointer == trainer.pointer) {
        query.written_workers = ParseInt(e.before);
        break;
      }
  // A JobSet's restart: its Jobs and pods come from templates holding the value graintune gave
  // attempt 0 (the fallback in WritePlan); unless the run keeps its value, that value is not
  // this attempt's, so it is re-picked.
  if (query.only_applied_values && query.has_restart_label && !query.pins_workers &&
      primary.annotations.applied_attempt != std::optional<int>(query.attempt))
    query.only_applied_values = false;
  return query;
}

// A plain Job's pod created after some of its pods failed is a retry: the next attempt(s).
// A reinvocation sees the attempt this pod was given, failures included: they are taken out
// first, so they count once. Returns the failed pods counted into `query.attempt`.
int CountJobRetries(const json& object_meta, const std::map<std::string, std::string>& labels,
                    const std::string& ns, workload::JobStatusSource& jobs, AttemptQuery& query) {
  auto job = labels.find("batch.kubernetes.io/job-name");
  if (job == labels.end()) job = labels.find("job-name");
  if (job == labels.end()) return 0;
  if (const std::string* counted =
          workload::StringEntry(object_meta, "annotations", workload::kFailedPodsCountedAnnotation))
    if (std::optional<int> n = ParseInt(*counted); n && *n > 0 && *n <= query.attempt)
      query.attempt -= *n;
  const std::optional<int> failed = jobs.FailedPods(ns, job->second);
  if (!failed || *failed <= 0) return 0;
  query.attempt += *failed;
  return *failed;
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

// Splits plan.workers with the eval pipeline when there is one, and keeps the value within what
// MaxText accepts where -1 would have started; false when MaxText must pick (the limit cannot be
// told). `hosts_annotated`: the data hosts to record on a Job or JobSet, when they were read.
bool FitToMaxText(const json& object, WorkloadKind kind, const TemplateSites& primary,
                  const ContainerSites& trainer, const TuningInputs& inputs, bool has_eval,
                  Plan& plan, std::optional<long>& hosts_annotated) {
  if (has_eval) {
    const WorkerSplit split = SplitWithEval(plan.workers, ComputeBudgets(inputs).ceiling);
    plan.workers = split.workers;
    plan.eval_workers = split.eval_workers;
  }
  const std::optional<long> hosts = DataHosts(object, kind, primary);
  bool hosts_read = false;
  if (!WithinMaxTextLimits(trainer, primary.annotations.data_files, hosts, has_eval, plan, hosts_read))
    return false;
  if (hosts_read && kind != WorkloadKind::kPod) hosts_annotated = hosts;
  return true;
}

// The practice lap this attempt runs under `policy` (spec.lap), or nullopt with plan.lap saying
// why not (empty when the policy asks for no lap). A lap sizes a run's one value, so only the
// first attempt of a run that keeps its value and whose value admission decided (no run record,
// no recommendation) runs one; the exporter measures it.
std::optional<LapSettings> LapFor(const Policy& policy, const TuningInputs& inputs,
                                  const std::string& ns, const ContainerSites& trainer,
                                  const ExporterInjection* exporter, Plan& plan) {
  if (policy.lap.mode == LapPolicy::Mode::kOff) return std::nullopt;
  const auto none = [&](const std::string& why) {
    plan.lap = "no practice lap: " + why;
    return std::nullopt;
  };
  if (!plan.resume.pins_workers) return none("the value may change at every restart, where it is measured");
  if (plan.attempt != 0 || !plan.decision) return none("the run's value is set (" + plan.reason + ")");
  if (trainer.init || trainer.overrides.aot_compile_only) return none("the run's trainer is not a regular container");
  if (!exporter) return none("the webhook adds no exporter (--no-exporter), so nothing would measure it");
  for (const std::string& source : plan.learned_from)
    if (source.starts_with(ns + "/"))
      return none("figures learned in this namespace (" + source + ") size the value");
  const int steps = policy.lap.steps.value_or(LapSteps(inputs, *plan.decision));
  return LapSettings{.admission_value = plan.workers,
                     .steps = steps,
                     .timeout_seconds = policy.lap.timeout_seconds.value_or(LapTimeoutSeconds(inputs, steps)),
                     .answer_wait_seconds = policy.lap.answer_wait_seconds,
                     .expected_seconds = LapExpectedSeconds(inputs, steps)};
}

// Whether the start check can take the -1s graintune leaves as written (docs/start-check.md): it
// is on, the exporter is there to hear what it saw, and the run's trainer is a regular
// container with a command of its own (or one a template already wrapped) whose training
// count is among those -1s.
bool StartCheckCanFill(const json& object, const std::vector<TemplateSites>& found, const Policy& policy,
                       const ExporterInjection* exporter) {
  if (!policy.start_check || !exporter || policy.mode == Mode::kOff) return false;
  // (Named pointers, not a structured binding: clang 14, the fuzz build's, cannot capture one.)
  const std::pair<const TemplateSites*, const ContainerSites*> deciding = DecidingContainer(found);
  const TemplateSites* t = deciding.first;
  const ContainerSites* trainer = deciding.second;
  if (trainer->init || trainer->overrides.aot_compile_only) return false;
  // A template wrapped before (a JobSet's, for its pods) carries the launcher and the exporter,
  // whose metrics file is graintune's own.
  const bool wrapped = LauncherRoleOf(object.at(json::json_pointer(t->ref.spec_pointer))) == LauncherRole::kStartCheck;
  if (!wrapped && !StartCheckFlagsFor(*trainer, *trainer->container, 1, LapInjection{}, true).ok()) return false;
  return std::any_of(t->edits.begin(), t->edits.end(), [&](const Edit& e) {
    return !IsEvalKey(e.key) && e.container_pointer == trainer->pointer;
  });
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

// A pod graintune leaves as written whose trainer carries the launcher (its Job or JobSet
// template got a lap for attempt 0) runs no lap in a later attempt: its answer, "none", is set
// before it starts (graintune-launcher then starts the trainer at once).
void AnswerNoLap(json& object, int attempt, Plan& plan) {
  if (attempt == 0 || LauncherRoleOf(object.value("spec", json::object())) != LauncherRole::kLap) return;
  if (workload::StringEntry(workload::MetadataOf(object), "annotations", kLapValueAnnotation)) return;
  plan.touched = {"/metadata"};
  const json before = CopyTouched(object, plan.touched);
  AnnotateNoLap(object, "/metadata", attempt, plan);
  plan.patch = ScopedPatch(before, object, plan.touched);
  plan.changed = !plan.patch.empty();
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
      fill_at_start ? std::nullopt : LapFor(policy, *inputs, ns, *trainer, exporter, plan);
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
