#include "tests/controlplane/tpu_nodes.h"

#include <cmath>

#include "tuner/machine_types.h"

namespace graintune::testing {

Result<kube::Json> TpuNode(const TpuNodeSpec& spec) {
  std::optional<MachineType> type = FindMachineType(spec.machine_type);
  if (!type) return Status::Error("unknown machine type '" + spec.machine_type + "'");
  const HostShape allocatable = HostShapeOf(*type);
  const double cpu = spec.allocatable_cpu.value_or(allocatable.cpu_cores);
  const double memory = spec.allocatable_memory_bytes.value_or(allocatable.memory_bytes);
  const auto milli = [](double cores) { return std::to_string(std::llround(cores * 1000)) + "m"; };
  const auto ki = [](double bytes) { return std::to_string(std::llround(bytes / 1024)) + "Ki"; };
  const std::string chips = std::to_string(type->tpu_chips);
  return kube::Json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", spec.name},
        {"annotations", {{"kwok.x-k8s.io/node", "fake"}}},
        {"labels",
         {{"kubernetes.io/hostname", spec.name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"type", "kwok"},
          {"node.kubernetes.io/instance-type", spec.machine_type},
          {"cloud.google.com/gke-tpu-accelerator", spec.accelerator},
          {"cloud.google.com/gke-tpu-topology", spec.topology}}}}},
      {"spec", {{"taints", {{{"key", "google.com/tpu"}, {"value", "present"},
                             {"effect", "NoSchedule"}}}}}},
      {"status",
       {{"capacity", {{"cpu", milli(type->vcpus)},
                      {"memory", ki(type->memory_gib * 1024.0 * 1024.0 * 1024.0)},
                      {"google.com/tpu", chips}, {"pods", "110"}}},
        {"allocatable", {{"cpu", milli(cpu)}, {"memory", ki(memory)},
                         {"google.com/tpu", chips}, {"pods", "110"}}}}}};
}

}  // namespace graintune::testing
