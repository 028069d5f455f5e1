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

// The machine type of the hosts of a TPU slice given its node labels
// cloud.google.com/gke-tpu-accelerator (e.g. "tpu-v6e-slice") and
// cloud.google.com/gke-tpu-topology (e.g. "4x8"), as xpk lays slices out (xpk 1.16.0,
// xpk/core/system_characteristics.py: chips_per_vm is 1 for a 1x1 topology and 4 for every
// other, so v6e-8 (2x4) is 2 x ct6e-standard-4t and v5litepod-8 is 2 x ct5lp-hightpu-4t; v4
// and v5p hosts always have 4 chips). A 2x4 v5e / v6e slice is one 8-chip -8t host only when
// the pod asks for 8 chips (`chips_per_host`, its google.com/tpu limit; 0 = not set): the labels
// alone cannot tell the two apart, and the 4-chip host is the smaller in memory.
std::optional<MachineType> MachineTypeForSlice(std::string_view accelerator,
                                               std::string_view topology,
                                               int chips_per_host = 0);

// Number of chips in a topology string ("4x8" -> 32, "2x2x4" -> 16); nullopt if malformed.
std::optional<int> ChipsInTopology(std::string_view topology);

// The allocatable host shape of a machine type (capacity less GKE's reservations).
HostShape HostShapeOf(const MachineType& type);

}  // namespace graintune
