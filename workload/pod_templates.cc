#include "workload/pod_templates.h"

#include <algorithm>

#include "base/numbers.h"

namespace graintune::workload {
namespace {

const nlohmann::json* At(const nlohmann::json& root, const std::string& pointer) {
  try {
    const nlohmann::json::json_pointer p(pointer);
    return root.contains(p) ? &root.at(p) : nullptr;
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

}  // namespace

std::string ToString(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kPod: return "Pod";
    case WorkloadKind::kJob: return "Job";
    case WorkloadKind::kJobSet: return "JobSet";
    case WorkloadKind::kOther: break;
  }
  return "Other";
}

std::string GroupOf(const std::string& api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

WorkloadKind KindOf(const std::string& group, const std::string& kind) {
  if (group.empty() && kind == "Pod") return WorkloadKind::kPod;
  if (group == "batch" && kind == "Job") return WorkloadKind::kJob;
  if (group == "jobset.x-k8s.io" && kind == "JobSet") return WorkloadKind::kJobSet;
  return WorkloadKind::kOther;
}

std::vector<PodTemplateRef> LocatePodTemplates(const nlohmann::json& object, WorkloadKind kind) {
  std::vector<PodTemplateRef> refs;
  auto add_if_object = [&](const std::string& spec, const std::string& metadata,
                           const std::string& name) {
    const nlohmann::json* s = At(object, spec);
    if (s && s->is_object()) refs.push_back({spec, metadata, name});
  };
  switch (kind) {
    case WorkloadKind::kPod:
      add_if_object("/spec", "/metadata", "");
      break;
    case WorkloadKind::kJob:
      add_if_object("/spec/template/spec", "/spec/template/metadata", "");
      break;
    case WorkloadKind::kJobSet: {
      const nlohmann::json* jobs = At(object, "/spec/replicatedJobs");
      if (!jobs || !jobs->is_array()) break;
      for (size_t i = 0; i < jobs->size(); ++i) {
        const std::string base = "/spec/replicatedJobs/" + std::to_string(i);
        const nlohmann::json& job = (*jobs)[i];
        std::string name =
            job.is_object() && job.contains("name") && job["name"].is_string() ? job["name"].get<std::string>() : "";
        add_if_object(base + "/template/spec/template/spec", base + "/template/spec/template/metadata",
                      name);
      }
      break;
    }
    case WorkloadKind::kOther:
      break;
  }
  return refs;
}

NodeSelection NodeSelectionOf(const nlohmann::json& pod_spec) {
  NodeSelection selection;
  if (const nlohmann::json* ns = At(pod_spec, "/nodeSelector"); ns && ns->is_object()) {
    for (const auto& [k, v] : ns->items())
      if (v.is_string()) selection.node_selector[k] = v.get<std::string>();
  }
  const nlohmann::json* terms = At(
      pod_spec,
      "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
  if (terms && terms->is_array()) {
    for (const nlohmann::json& term : *terms) {
      std::map<std::string, std::vector<std::string>> parsed;
      const nlohmann::json* exprs = At(term, "/matchExpressions");
      if (!exprs || !exprs->is_array()) continue;
      for (const nlohmann::json& e : *exprs) {
        if (!e.is_object() || StringField(e, "operator") != "In" || !e.contains("key") ||
            !e["key"].is_string() || !e.contains("values") || !e["values"].is_array())
          continue;
        for (const nlohmann::json& v : e["values"])
          if (v.is_string()) parsed[e["key"].get<std::string>()].push_back(v.get<std::string>());
      }
      if (!parsed.empty()) selection.required_terms.push_back(std::move(parsed));
    }
  }
  for (const char* list : {"/initContainers", "/containers"}) {
    const nlohmann::json* containers = At(pod_spec, list);
    if (!containers || !containers->is_array()) continue;
    for (const nlohmann::json& c : *containers) {
      const nlohmann::json* tpu = At(c, "/resources/limits/google.com~1tpu");
      if (!tpu) continue;
      const std::string text = tpu->is_string() ? tpu->get<std::string>() : tpu->is_number() ? tpu->dump() : "";
      if (std::optional<double> chips = ParseFiniteNumber(text); chips && *chips >= 1 && *chips <= 64)
        selection.tpu_chips = std::max(selection.tpu_chips, static_cast<int>(*chips));
    }
  }
  return selection;
}

std::map<std::string, std::string> StringMap(const nlohmann::json& metadata, const char* field) {
  std::map<std::string, std::string> out;
  if (!metadata.is_object()) return out;
  auto it = metadata.find(field);
  if (it == metadata.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

const std::string* StringEntry(const nlohmann::json& metadata, const char* field, const std::string& key) {
  if (!metadata.is_object()) return nullptr;
  auto map = metadata.find(field);
  if (map == metadata.end() || !map->is_object()) return nullptr;
  auto entry = map->find(key);
  if (entry == map->end() || !entry->is_string()) return nullptr;
  return entry->get_ptr<const std::string*>();
}

std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace graintune::workload
