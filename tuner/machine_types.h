// The built-in table of GKE TPU machine types (public figures), used when no Node the pod
// could land on exists yet (node pools scaled to zero are the common case) and by the CLI.
//
// Lookups return std::nullopt when the name or labels are unknown; callers say so to the user.
// The table is immutable static data, safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/host_shape.h"

namespace graintune {

struct MachineType {
  std::string_view name;          // e.g. "ct6e-standard-4t"
  ChipGeneration generation;
  int tpu_chips;                  // chips per host
  double vcpus;                   // capacity, before GKE's reservations
  double memory_gib;
};

const std::vector<MachineType>& AllMachineTypes();

std::optional<MachineType> FindMachineType(std::string_view name);

// The machine type GKE uses for a TPU slice given its node labels
// cloud.google.com/gke-tpu-accelerator (e.g. "tpu-v6e-slice") and
// cloud.google.com/gke-tpu-topology (e.g. "4x8"). Single-host topologies of 1 and 8 chips use
// the -1t / -8t machine types; everything else the 4-chip hosts.
std::optional<MachineType> MachineTypeForSlice(std::string_view accelerator,
                                               std::string_view topology);

// Number of chips in a topology string ("4x8" -> 32, "2x2x4" -> 16); nullopt if malformed.
std::optional<int> ChipsInTopology(std::string_view topology);

// The allocatable host shape of a machine type (capacity less GKE's reservations).
HostShape HostShapeOf(const MachineType& type);

}  // namespace graintune
