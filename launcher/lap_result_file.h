// The lap's result file (contract/lap_result.h) as graintune-launcher keeps it: written whole when
// the lap ends, then changed in place as what follows the lap becomes known (the value the
// trainer starts with, just before the exec; the compile watcher's verdict, after the trainer's
// first step). Every write replaces the file whole (base/atomic_file.h), so the exporter, which
// reads it beside the trainer, never reads half of one. Errors are logged, never raised: the
// file informs graintune, and the trainer starts whatever happens to it.
#pragma once

#include <string>

#include "contract/lap_result.h"

namespace graintune::launcher {

void WriteLapResult(const std::string& path, const contract::LapResult& result);

// Each changes the file the launcher wrote; a file that is absent (no lap ran in this pod) or is
// not a lap's result is left alone.
void RecordTrainerStart(const std::string& path, int workers, const std::string& why);
void RecordTrainerCompile(const std::string& path, const contract::TrainerCompileVerdict& verdict);

// The verdict in the launcher's log.
void LogTrainerCompile(const contract::TrainerCompileVerdict& verdict);

}  // namespace graintune::launcher
