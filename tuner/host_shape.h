// HostShape: what one TPU host offers the pod that trains on it.
//
// cpu_cores and memory_bytes are what Kubernetes lets the pod use: a Node's
// status.allocatable, or a machine type's capacity less GKE's reservations
// (GkeAllocatable), further bounded by the container's own limits (BoundByLimits).
// Plain value type; no I/O.
#pragma once

#include <optional>
#include <string>

namespace graintune {

// TPU chip generations graintune knows figures for.
enum class ChipGeneration { kUnknown, kV4, kV5e, kV5p, kV6e };

std::string ToString(ChipGeneration generation);
// "v4", "v5e"/"v5litepod"/"v5lite", "v5p", "v6e"; kUnknown for anything else.
ChipGeneration ParseChipGeneration(const std::string& text);

struct HostShape {
  double cpu_cores = 0;      // allocatable vCPUs
  double memory_bytes = 0;   // allocatable memory
  int tpu_chips = 0;         // chips attached to this host (google.com/tpu)
  ChipGeneration generation = ChipGeneration::kUnknown;
  std::string machine_type;  // e.g. "ct6e-standard-4t"; empty when unknown
  std::string source;        // where the figures came from, for reasons ("node x", "table")
};

// Allocatable cpu and memory GKE leaves on a node of the given capacity (GKE's documented
// reservation rules for kube-reserved cpu and memory, plus the 100 MiB eviction threshold).
HostShape GkeAllocatable(const HostShape& capacity);

// Bounds the shape by a container's cpu and memory limits when they are set.
HostShape BoundByLimits(const HostShape& host, std::optional<double> cpu_limit,
                        std::optional<double> memory_limit);

}  // namespace graintune
