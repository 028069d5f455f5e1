// KWOK Node objects that look like GKE TPU hosts: the labels GKE puts on TPU node pools, the
// google.com/tpu taint, and capacity/allocatable of a machine type (the built-in table's public
// figures and GKE's reservations, or explicit figures when a test wants a node that differs).
#pragma once

#include <optional>
#include <string>

#include "kube/client.h"

namespace graintune::testing {

struct TpuNodeSpec {
  std::string name;
  std::string machine_type = "ct6e-standard-4t";
  std::string accelerator = "tpu-v6e-slice";
  std::string topology = "4x8";
  std::optional<double> allocatable_cpu;             // default: from the machine type
  std::optional<double> allocatable_memory_bytes;    // default: from the machine type
};

// Error when the machine type is not in graintune's table.
Result<kube::Json> TpuNode(const TpuNodeSpec& spec);

}  // namespace graintune::testing
