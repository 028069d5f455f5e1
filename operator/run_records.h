// What the operator keeps of runs (one MaxText checkpoint directory each) and how they ended,
// as pure functions over the key's pods and its stored status.
//
//  - status.runs: one entry per run whose attempts restore Grain's iterator (pods annotated
//    graintune.dev/resume: pins-workers), with the value its first attempt ran: the webhook gives
//    every later attempt of that run the same value. An entry is never changed once written;
//    at most kMaxStoredRuns are kept (the newest by first attempt).
//  - Ended early: a pod that succeeded (its trainer exited 0) whose exporter's last step is below
//    the run's configured steps - 1 (maxtext 0.2.5 exits 0 when a resumed Grain iterator fails).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "operator/pod_facts.h"
#include "tuner/attempt_value.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {

inline constexpr size_t kMaxStoredRuns = 32;

// status.runs as it should be: the stored entries, plus a run for each checkpoint directory a
// pinned attempt's pods name that none records yet (its value: the lowest such attempt's pods',
// which is their practice lap's answer when it gave one; a pod still waiting for that answer
// names no run yet).
std::vector<workload::RunStatus> RunsStatus(const workload::GrainTuningStatus& old_status,
                                            const std::vector<PodFacts>& pods);

// The newest attempt among `pods` and, when its pods restore Grain's iterator, its run.
struct PinnedAttempt {
  int attempt = 0;
  std::string checkpoint_dir;
  RunRecord run;
};
// `runs`: status.runs as read (workload::RunRecordsOf).
std::optional<PinnedAttempt> NewestPinnedAttempt(const std::map<std::string, RunRecord>& runs,
                                                 const std::vector<PodFacts>& pods);

using EndedEarly = workload::EndedEarlyStatus;
// The newest attempt with a pod that ended early; nullopt when none did (or nothing tells).
std::optional<EndedEarly> NewestEndedEarly(const std::vector<PodFacts>& pods);

}  // namespace graintune::op
