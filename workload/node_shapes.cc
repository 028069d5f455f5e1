#include "workload/node_shapes.h"

#include <algorithm>
#include <cmath>

#include "tuner/machine_types.h"
#include "tuner/quantity.h"

namespace graintune::workload {
namespace {

std::string Str(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// obj[key] when obj is an object holding an object there, else an empty object.
const nlohmann::json& Object(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

std::string Label(const std::map<std::string, std::string>& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

Result<NodeFacts> NodeFactsFromJson(const nlohmann::json& node) {
  if (!node.is_object()) return Status::Error("a Node must be an object");
  // Fields of the wrong type read as absent: this runs on informer threads, where a throw
  // would end the process.
  const nlohmann::json& meta = Object(node, "metadata");
  NodeFacts f;
  f.name = Str(meta, "name");
  for (const auto& [k, v] : Object(meta, "labels").items())
    if (v.is_string()) f.labels[k] = v.get<std::string>();
  const nlohmann::json& spec = Object(node, "spec");
  if (auto u = spec.find("unschedulable"); u != spec.end() && u->is_boolean()) f.unschedulable = u->get<bool>();
  const nlohmann::json& alloc = Object(Object(node, "status"), "allocatable");
  Result<double> cpu = ParseNonNegativeQuantity(Str(alloc, "cpu"), "node " + f.name + " allocatable cpu");
  if (!cpu.ok()) return cpu.status();
  Result<double> mem =
      ParseNonNegativeQuantity(Str(alloc, "memory"), "node " + f.name + " allocatable memory");
  if (!mem.ok()) return mem.status();
  f.allocatable_cpu = *cpu;
  f.allocatable_memory_bytes = *mem;
  if (std::string tpu = Str(alloc, "google.com/tpu"); !tpu.empty()) {
    Result<double> chips = ParseNonNegativeQuantity(tpu, "node " + f.name + " google.com/tpu");
    if (!chips.ok()) return chips.status();
    if (*chips > 1e6) return Status::Error("node " + f.name + " google.com/tpu " + tpu + " is not a chip count");
    f.tpu_chips = static_cast<int>(std::lround(*chips));
  }
  return f;
}

void KeepOnlyNodeFacts(nlohmann::json& node) {
  if (!node.is_object()) return;
  nlohmann::json slim = nlohmann::json::object();
  auto copy = [](const nlohmann::json& from, nlohmann::json& to, const char* key) {
    if (from.is_object())
      if (auto it = from.find(key); it != from.end()) to[key] = std::move(*it);
  };
  if (auto meta = node.find("metadata"); meta != node.end() && meta->is_object()) {
    slim["metadata"] = nlohmann::json::object();
    for (const char* key : {"name", "uid", "resourceVersion", "labels"}) copy(*meta, slim["metadata"], key);
  }
  if (auto spec = node.find("spec"); spec != node.end() && spec->is_object()) {
    slim["spec"] = nlohmann::json::object();
    copy(*spec, slim["spec"], "unschedulable");
  }
  if (auto status = node.find("status"); status != node.end() && status->is_object()) {
    slim["status"] = nlohmann::json::object();
    copy(*status, slim["status"], "allocatable");
  }
  for (const char* key : {"apiVersion", "kind"}) copy(node, slim, key);
  node = std::move(slim);
}

bool NodeMatches(const std::map<std::string, std::string>& labels,
                 const NodeSelection& selection) {
  for (const auto& [key, value] : selection.node_selector)
    if (!labels.count(key) || Label(labels, key) != value) return false;
  if (selection.required_terms.empty()) return true;
  return std::any_of(selection.required_terms.begin(), selection.required_terms.end(),
                     [&](const auto& term) {
                       for (const auto& [key, allowed] : term) {
                         auto it = labels.find(key);
                         if (it == labels.end() ||
                             std::find(allowed.begin(), allowed.end(), it->second) == allowed.end())
                           return false;
                       }
                       return true;
                     });
}

std::optional<HostShape> ShapeFromNodes(const std::vector<NodeFacts>& nodes,
                                        const NodeSelection& selection) {
  std::optional<HostShape> shape;
  const NodeFacts* tightest = nullptr;
  int matching = 0;
  const bool tpu_host = SelectsTpuHost(selection);
  for (const NodeFacts& n : nodes) {
    if (n.unschedulable || (n.tpu_chips > 0) != tpu_host || !NodeMatches(n.labels, selection)) continue;
    ++matching;
    if (!shape) {
      shape = HostShape{n.allocatable_cpu, n.allocatable_memory_bytes, n.tpu_chips};
      tightest = &n;
      continue;
    }
    if (n.allocatable_cpu < shape->cpu_cores || n.allocatable_memory_bytes < shape->memory_bytes)
      tightest = &n;
    shape->cpu_cores = std::min(shape->cpu_cores, n.allocatable_cpu);
    shape->memory_bytes = std::min(shape->memory_bytes, n.allocatable_memory_bytes);
    shape->tpu_chips = std::min(shape->tpu_chips, n.tpu_chips);
  }
  if (!shape) return std::nullopt;
  // Chip generation and machine type from GKE's labels, as the table knows them.
  const std::string type_label = Label(tightest->labels, "node.kubernetes.io/instance-type");
  std::optional<MachineType> type = FindMachineType(type_label);
  if (!type && tpu_host)
    type = MachineTypeForSlice(Label(tightest->labels, "cloud.google.com/gke-tpu-accelerator"),
                               Label(tightest->labels, "cloud.google.com/gke-tpu-topology"),
                               shape->tpu_chips);
  if (type) {
    shape->generation = type->generation;
    shape->machine_type = std::string(type->name);
  } else {
    shape->machine_type = type_label;
  }
  shape->source = "node " + tightest->name + " (tightest of " + std::to_string(matching) +
                  " matching node" + (matching == 1 ? "" : "s") + ")";
  return shape;
}

}  // namespace graintune::workload
