// TPU slice names as Cloud TPU and xpk write them ("v6e-32", "v5litepod-16", "v5p-128",
// "v4-8") mapped to the GKE machine type of their hosts, chips per host and host count.
//
// The number after the dash counts chips for v5e (v5litepod) and v6e, TensorCores (two per
// chip) for v4 and v5p, as Cloud TPU's accelerator types do. Hosts are laid out as xpk lays
// them out (like MachineTypeForSlice): a 1-chip slice is one -1t host, every larger one is made
// of 4-chip hosts (v6e-8 = 2 x ct6e-standard-4t). Unknown generations and sizes that no slice
// has are errors naming the accepted sizes. Pure function.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "tuner/machine_types.h"

namespace graintune {

struct SliceShape {
  std::string name;      // as given, e.g. "v6e-32"
  MachineType machine;   // of every host in the slice
  int chips = 0;         // in the whole slice
  int hosts = 0;
};

// True when `text` looks like a slice name (a TPU generation prefix, a dash and digits), so a
// caller can tell a slice from a machine type before parsing.
bool LooksLikeSliceName(std::string_view text);

Result<SliceShape> ParseSliceName(std::string_view text);

}  // namespace graintune
