// The exporter's termination message: the last training step it read from MaxText's metrics
// file, written to the sidecar's terminationMessagePath (/dev/termination-log) as MaxText goes,
// so that whenever the sidecar stops the kubelet puts it in the pod's status
// (initContainerStatuses[graintune-exporter].state.terminated.message). The operator compares it
// with the run's configured steps: a trainer that exits 0 before steps - 1 ended early (MaxText
// 0.2.5 does that, exit code 0, when a resumed Grain iterator fails).
//
// Format: {"lastStep":N} on one line (the kubelet keeps at most 4 KiB). Pure functions.
#pragma once

#include <optional>
#include <string>

namespace graintune::telemetry {

std::string LastStepMessage(long last_step);

// The step in a message LastStepMessage wrote; nullopt for anything else (another container's
// message, a torn write, a hostile pod's text): never an exception.
std::optional<long> ParseLastStepMessage(const std::string& message);

// The largest message read (the kubelet's own cap).
inline constexpr size_t kMaxTerminationMessageBytes = 4096;

}  // namespace graintune::telemetry
