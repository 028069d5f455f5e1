// How two GrainTuning statuses differ: not at all (apart from renewal timestamps), only in the
// progress of running attempts, or in what the operator and the webhook act on. The controller
// writes progress at most every ControllerOptions::progress_write_interval per key and anything
// else at once (status_write.cc); the reconciler tells a real change from a rewrite.
// Pure functions over JSON values; a field of an unexpected type compares as written.
#pragma once

#include <set>

#include <nlohmann/json.hpp>

namespace graintune::op {

// Whether two GrainTuning statuses say the same, apart from the fields every write renews
// (the recommendation's decidedAt, the conditions' lastTransitionTime).
bool StatusEquivalent(const nlohmann::json& a, const nlohmann::json& b);

// Whether `desired` differs from `stored` only in how far running attempts have got: a
// trial's figures (samples, step times, throughput, stall fraction, memory), the learned
// per-worker rate, or the recommendation's reason (which quotes them). What anything acts on
// is unchanged: the trials' attempts, workers, OOM and data-bound verdicts, whether a trial
// has a worker memory figure and whether a learned rate exists at all (later workloads of the
// dataset start from them), the recommended value, phase, conditions and ended attempts.
// False when the two are equivalent.
bool ProgressOnly(const nlohmann::json& stored, const nlohmann::json& desired);

// Whether the trial of any of `attempts` differs between the two statuses (one has it and the
// other not, or any field differs).
bool TrialsDiffer(const nlohmann::json& stored, const nlohmann::json& desired, const std::set<int>& attempts);

}  // namespace graintune::op
