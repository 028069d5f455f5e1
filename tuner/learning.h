// What a workload's trials teach other runs: LearnFromTrials.
//
// A run keeps one value, so the loop closes across runs: what one run measured is kept (in its
// GrainTuning) and feeds the first pick of the next run of the same workload, or of another
// workload reading the same dataset on the same machine type. What transfers, and why:
//   - the per-worker rate (tokens per second one Grain worker delivers): a property of the
//     dataset (record size, tokenizer, decode cost) and of the host's cores, so it is keyed by
//     the dataset annotation and the machine type. Measured exactly by a starved trial
//     (throughput / workers), or from a fed trial's busy share counted kRunBusyShareMargin
//     higher (the share is read a few points off; a lower rate only adds workers);
//   - the memory of one worker (its peak resident set): dataset and Grain settings, same key;
//   - the demand (tokens per second the chips consumed when fed): a property of the model
//     settings, the batch and the chips, not of the dataset. It transfers to the next run of the
//     same workload through its trials, and to other workloads whose demand key
//     (workload/demand_key.h: the settings that shape the step, the chips, the machine type)
//     is the same.
// Pure: plain values in and out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/trial.h"

namespace graintune {

struct LearnedFigures {
  std::optional<double> tokens_per_second_per_worker;
  std::string rate_basis;  // "starved attempt 2" | "busy share of attempt 3"
  std::optional<double> worker_memory_bytes;        // the highest peak any attempt showed
  std::optional<double> fed_tokens_per_second_per_host;  // the best a fed attempt reached
};

// From the newest starved trial, else the newest fed trial with a busy share. OOM-killed and
// inconclusive trials (fewer than kMinSteadySamples steps) teach nothing but their memory
// (none: an OOM kill's memory is not a worker's peak).
LearnedFigures LearnFromTrials(const std::vector<Trial>& trials);

}  // namespace graintune
