// The --history file of `graintune recommend`: earlier attempts as step times, so the
// across-restart logic can be asked what it would pick next without a cluster.
//
// Format: a JSON array, oldest attempt first, each entry
//   {"workers": 4, "step_seconds": [30.1, 4.3, ...]}        a run's per-step seconds (step 1 first)
//   {"workers": 12, "oom_killed": true}                      an attempt killed for memory
// with optional "warmup_steps" (default 2: dropped before summarising, like the operator),
// "worker_memory_bytes" (peak RSS of one worker, when measured) and "worker_busy_fraction"
// (the share of the time the workers were busy, 0..1, when measured). The same format holds
// earlier runs (recommend --runs), one entry per run. Each run is summarised by
// SummarizeSteps with the demand's tokens per step. Every malformed entry is an error naming it.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "tuner/trial.h"

namespace graintune::cli {

// Parses the file's text (not the path) into trials, attempt = position in the array.
Result<std::vector<Trial>> ParseHistory(const std::string& text, double tokens_per_step_per_host);

// A practice lap's figures (recommend --lap): one entry in the format above (a JSON object), or
// an array of entries, one per host of the attempt. Hosts are numbered from 0; at most
// kMaxLapHosts entries.
Result<std::vector<Trial>> ParseLap(const std::string& text, double tokens_per_step_per_host);

// The file at `path`, parsed by `parse` (ParseHistory or ParseLap); errors name the path.
Result<std::vector<Trial>> ReadTrialsFile(
    const std::string& path, double tokens_per_step_per_host,
    Result<std::vector<Trial>> (*parse)(const std::string&, double) = ParseHistory);

// Reads and parses the file at `path`.
Result<std::vector<Trial>> ReadHistoryFile(const std::string& path, double tokens_per_step_per_host);

}  // namespace graintune::cli
