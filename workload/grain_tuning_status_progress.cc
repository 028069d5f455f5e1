// The progress rule of grain_tuning_status.h: what in a status is progress (written at most every
// progress interval) and what is news (written at once).
#include "workload/grain_tuning_status.h"

#include <utility>

namespace graintune::workload {

namespace {

// Status without the fields that change on every write, to tell real changes apart.
GrainTuningStatus Comparable(GrainTuningStatus status) {
  if (status.recommendation) status.recommendation->decided_at.reset();
  for (ConditionStatus& c : status.conditions) c.last_transition_time.clear();
  return status;
}

// A trial as Decide() and the webhook judge it: which attempt, how many workers, whether it
// was OOMKilled or data-bound, and whether it has a memory figure (its first one is news:
// later workloads of the dataset are sized with it). Its running figures are left out.
TrialStatus TrialVerdict(const TrialStatus& t) {
  TrialStatus verdict{.attempt = t.attempt, .workers = t.workers};
  verdict.oom_killed = t.oom_killed;
  verdict.data_bound = t.data_bound;
  if (t.worker_memory_bytes) verdict.worker_memory_bytes = 1;
  return verdict;
}

// Which figure exists is news, its value progress.
void KeepPresence(std::optional<double>& figure) {
  if (figure) figure = 1;
}

// Status with only what is not progress: trials cut to their verdicts, learned figures cut to
// whether they exist, no reasons (they quote the figures), no renewal timestamps.
GrainTuningStatus Verdicts(GrainTuningStatus status) {
  status = Comparable(std::move(status));
  for (TrialStatus& t : status.trials) t = TrialVerdict(t);
  if (status.last_trial) status.last_trial = TrialVerdict(*status.last_trial);
  KeepPresence(status.learned_tokens_per_second_per_worker);
  if (status.learned) {
    KeepPresence(status.learned->tokens_per_second_per_worker);
    KeepPresence(status.learned->worker_memory_bytes);
    KeepPresence(status.learned->fed_tokens_per_second_per_host);
  }
  if (status.recommendation) status.recommendation->reason.reset();
  if (status.next_run) status.next_run->reason.reset();
  return status;
}

}  // namespace

bool StatusEquivalent(const GrainTuningStatus& a, const GrainTuningStatus& b) {
  return Comparable(a) == Comparable(b);
}

bool ProgressOnly(const GrainTuningStatus& stored, const GrainTuningStatus& desired) {
  return !StatusEquivalent(stored, desired) && Verdicts(stored) == Verdicts(desired);
}

bool TrialsDiffer(const GrainTuningStatus& stored, const GrainTuningStatus& desired,
                  const std::set<int>& attempts) {
  for (int attempt : attempts)
    if (TrialOfAttempt(stored, attempt) != TrialOfAttempt(desired, attempt)) return true;
  return false;
}

}  // namespace graintune::workload
