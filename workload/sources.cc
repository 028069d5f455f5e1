#include "workload/sources.h"

#include "tuner/machine_types.h"

namespace graintune::workload {

std::vector<std::string> LabelValues(const NodeSelection& selection, const std::string& label) {
  std::vector<std::string> values;
  auto it = selection.node_selector.find(label);
  if (it != selection.node_selector.end()) values.push_back(it->second);
  for (const auto& term : selection.required_terms) {
    auto t = term.find(label);
    if (t != term.end()) values.insert(values.end(), t->second.begin(), t->second.end());
  }
  return values;
}

bool SelectsTpuHost(const NodeSelection& selection) {
  if (selection.tpu_chips > 0) return true;
  if (!LabelValues(selection, "cloud.google.com/gke-tpu-accelerator").empty()) return true;
  for (const std::string& type : LabelValues(selection, "node.kubernetes.io/instance-type"))
    if (FindMachineType(type)) return true;
  return false;
}

Result<HostShape> MachineTypeTableShapes::ShapeFor(const NodeSelection& selection) {
  for (const std::string& type : LabelValues(selection, "node.kubernetes.io/instance-type")) {
    if (std::optional<MachineType> found = FindMachineType(type)) return HostShapeOf(*found);
  }
  const std::vector<std::string> accelerators =
      LabelValues(selection, "cloud.google.com/gke-tpu-accelerator");
  const std::vector<std::string> topologies =
      LabelValues(selection, "cloud.google.com/gke-tpu-topology");
  for (const std::string& accelerator : accelerators) {
    const std::string topology = topologies.empty() ? "" : topologies.front();
    if (std::optional<MachineType> found = MachineTypeForSlice(accelerator, topology, selection.tpu_chips))
      return HostShapeOf(*found);
  }
  if (!SelectsTpuHost(selection))
    return Status::Error("no host shape for a CPU host: the machine-type table holds TPU hosts only");
  if (accelerators.empty())
    return Status::Error(
        "no TPU host shape: the pod selects no cloud.google.com/gke-tpu-accelerator or known "
        "node.kubernetes.io/instance-type");
  return Status::Error("no TPU host shape for accelerator '" + accelerators.front() + "'");
}

}  // namespace graintune::workload
