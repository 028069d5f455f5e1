#include "webhook/planner_sites.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "webhook/site_finders.h"
#include "workload/identity.h"
#include "workload/mounted_config.h"

namespace graintune::webhook::planner {
namespace {

// What a pod template without a metadata block reads as.
const json kNoMetadata = json::object();

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

}  // namespace

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

std::string JobMetadataOf(const workload::PodTemplateRef& ref) {
  return ref.metadata_pointer.substr(0, ref.metadata_pointer.rfind("/spec/template/metadata")) +
         "/metadata";
}

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

std::vector<Edit> WritableEdits(const std::vector<Edit>& edits) {
  std::vector<Edit> writable;
  for (const Edit& e : edits)
    if (Writes(e)) writable.push_back(e);
  return writable;
}

bool HasEvalSite(const std::vector<TemplateSites>& found) {
  return std::any_of(found.begin(), found.end(), [](const TemplateSites& t) {
    return std::any_of(t.edits.begin(), t.edits.end(), [](const Edit& e) { return IsEvalKey(e.key); });
  });
}

}  // namespace graintune::webhook::planner
