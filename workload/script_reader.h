// The script reader of ScanContainer (workload/container_overrides.h): one `bash -c` script's
// variables, then each word as bash expands it (workload/shell_expansion.h), the constructs it
// does not evaluate (workload/script_constructs.h) making the keys they may set unknown. Internal
// to the workload library.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "workload/container_env.h"
#include "workload/container_overrides.h"

namespace graintune::workload {

// Adds what `script` (at `pointer`, its container's env `env`) sets to `out`; `first_start`: how
// many MaxText starts scripts before this one held. Returns the MaxText starts it found, in
// order: whether each runs train_compile.
std::vector<bool> ReadScript(const ContainerEnv& env, const std::string& pointer, size_t first_start,
                             const std::string& script, ContainerOverrides& out);

}  // namespace graintune::workload
