// DemandKey: what a measured demand transfers by, from one workload to another.
//
// The demand (tokens per second a host's chips consume when fed) follows from the model and
// its MaxText settings, the batch, the sequence length and the chips, not from the dataset or
// the run. Two workloads whose keys are equal train the same step on the same hosts, so what
// one measured fed is the other's demand; the webhook then sizes the other's first pick from
// the measurement instead of a FLOPs estimate.
//
// The key names the figures that matter most (readable in status) and a hash of every other
// MaxText setting the job passes, apart from the settings known to leave the compute step
// alone (run names, paths, data loading, checkpointing, logging, evaluation, learning-rate
// schedule). A setting not on that list (remat_policy, quantization, a parallelism) is in the
// hash: an unfamiliar setting keeps two workloads apart rather than sharing a demand.
// Empty (transfers to nothing) when the machine type is unknown: a host of unknown kind may
// have any chips. Pure; bounded by the settings' size.
#pragma once

#include <map>
#include <string>

#include "tuner/host_shape.h"

namespace graintune::workload {

// `settings`: every MaxText key=value the job sets (overrides over its mounted config);
// `config_path`: the config file argument as written ("" when none); `chips_per_host` and
// `host` as the demand was estimated for them.
std::string DemandKey(const std::map<std::string, std::string>& settings,
                      const std::string& config_path, int chips_per_host, const HostShape& host);

// True when `key` leaves the compute step alone and is left out of the key.
bool LeavesTheStepAlone(const std::string& key);

}  // namespace graintune::workload
