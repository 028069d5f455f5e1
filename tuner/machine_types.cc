#include "tuner/machine_types.h"

#include <charconv>

namespace graintune {

const std::vector<MachineType>& AllMachineTypes() {
  // Public GKE/Compute Engine figures for TPU VM machine types.
  static const std::vector<MachineType> kTypes = {
      {"ct4p-hightpu-4t", ChipGeneration::kV4, 4, 240, 407},
      {"ct5lp-hightpu-1t", ChipGeneration::kV5e, 1, 24, 48},
      {"ct5lp-hightpu-4t", ChipGeneration::kV5e, 4, 112, 192},
      {"ct5lp-hightpu-8t", ChipGeneration::kV5e, 8, 224, 384},
      {"ct5p-hightpu-4t", ChipGeneration::kV5p, 4, 208, 448},
      {"ct6e-standard-1t", ChipGeneration::kV6e, 1, 44, 448},
      {"ct6e-standard-4t", ChipGeneration::kV6e, 4, 180, 720},
      {"ct6e-standard-8t", ChipGeneration::kV6e, 8, 180, 1440},
  };
  return kTypes;
}

std::optional<MachineType> FindMachineType(std::string_view name) {
  for (const MachineType& type : AllMachineTypes()) {
    if (type.name == name) return type;
  }
  return std::nullopt;
}

std::optional<int> ChipsInTopology(std::string_view topology) {
  if (topology.empty()) return std::nullopt;
  long long chips = 1;
  size_t start = 0;
  while (start <= topology.size()) {
    size_t end = topology.find('x', start);
    if (end == std::string_view::npos) end = topology.size();
    int dim = 0;
    auto [ptr, ec] = std::from_chars(topology.data() + start, topology.data() + end, dim);
    if (ec != std::errc() || ptr != topology.data() + end || dim <= 0 || dim > 4096)
      return std::nullopt;
    chips *= dim;
    if (chips > 1'000'000) return std::nullopt;
    start = end + 1;
  }
  return static_cast<int>(chips);
}

std::optional<MachineType> MachineTypeForSlice(std::string_view accelerator,
                                               std::string_view topology, int chips_per_host) {
  const ChipGeneration generation = ParseChipGeneration(std::string(accelerator));
  std::optional<int> chips = ChipsInTopology(topology);
  switch (generation) {
    case ChipGeneration::kV4: return FindMachineType("ct4p-hightpu-4t");
    case ChipGeneration::kV5p: return FindMachineType("ct5p-hightpu-4t");
    case ChipGeneration::kV5e:
    case ChipGeneration::kV6e: {
      const std::string prefix =
          generation == ChipGeneration::kV5e ? "ct5lp-hightpu-" : "ct6e-standard-";
      if (chips && *chips == 1) return FindMachineType(prefix + "1t");
      if (chips && *chips == 8 && chips_per_host == 8) return FindMachineType(prefix + "8t");
      return FindMachineType(prefix + "4t");
    }
    case ChipGeneration::kUnknown: break;
  }
  return std::nullopt;
}

HostShape HostShapeOf(const MachineType& type) {
  HostShape capacity;
  capacity.cpu_cores = type.vcpus;
  capacity.memory_bytes = type.memory_gib * 1024.0 * 1024 * 1024;
  capacity.tpu_chips = type.tpu_chips;
  capacity.generation = type.generation;
  capacity.machine_type = std::string(type.name);
  capacity.source = "machine-type table (" + std::string(type.name) + ")";
  return GkeAllocatable(capacity);
}

}  // namespace graintune
