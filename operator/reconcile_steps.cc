#include "operator/reconcile_steps.h"

#include <algorithm>
#include <cmath>

#include "tuner/learning.h"

namespace graintune::op {

using workload::ConditionStatus;
using workload::GrainTuningStatus;
using workload::RecommendationStatus;

AttemptPods PodsByAttempt(const std::vector<PodFacts>& pods) {
  AttemptPods attempts;
  for (const PodFacts& p : pods) attempts[p.attempt].push_back(&p);
  return attempts;
}

int NewestAttempt(const AttemptPods& attempts, const std::vector<Trial>& trials) {
  if (!attempts.empty()) return attempts.rbegin()->first;
  return trials.empty() ? 0 : trials.back().attempt;
}

workload::GrainTuningSpec SpecForNewGrainTuning(const ReconcileInput& in) {
  workload::GrainTuningSpec spec{.tuning_key = in.tuning_key};
  spec.mode = in.inputs ? ToString(in.inputs->policy.mode) : "Auto";
  if (!in.pods.empty()) {
    const PodFacts& any = in.pods.front();
    spec.workload = workload::WorkloadRef{
        .api_version = any.owner_kind == "JobSet" ? "jobset.x-k8s.io/v1alpha2"
                       : any.owner_kind == "Job"  ? "batch/v1"
                                                  : "v1",
        .kind = any.owner_kind,
        .name = any.owner_name};
    if (!any.dataset.empty()) spec.dataset = any.dataset;
    spec.learned_from = any.learned_from;
  }
  if (in.inputs && !in.inputs->demand.transfer_key.empty()) spec.demand_key = in.inputs->demand.transfer_key;
  if (!in.policy_name.empty()) spec.policy_name = in.policy_name;
  if (!in.dataset_kind.empty()) spec.dataset_kind = in.dataset_kind;
  if (in.inputs) {
    spec.min_workers = in.inputs->policy.min_workers;
    spec.max_workers = in.inputs->policy.max_workers;
  }
  return spec;
}

std::map<int, Trial> StoredTrials(const GrainTuningStatus& status) {
  std::map<int, Trial> trials;
  for (const workload::TrialStatus& t : status.trials) trials[t.attempt] = workload::TrialOf(t);
  return trials;
}

namespace {

bool AnyOomKilled(const std::vector<const PodFacts*>& pods) {
  return std::any_of(pods.begin(), pods.end(), [](const PodFacts* p) { return p->oom_killed; });
}

EventToRecord OomEvent(const PodFacts& pod, int attempt, int workers) {
  const std::string killed =
      "attempt " + std::to_string(attempt) + " was OOMKilled with " + std::to_string(workers) + " Grain workers";
  if (!pod.pins_workers) return {"Warning", "CappedByOOM", killed + "; later attempts stay below"};
  return {"Warning", "OOMKilledInPinnedRun",
          killed + ", and this run resumes Grain's iterator from its checkpoints (" + pod.checkpoint_dir +
              "): its next attempt keeps " + std::to_string(workers) +
              " (another count would stop MaxText early). Ways out: grain_use_elastic_iterator=true "
              "with packing=false, a new run_name, or a smaller grain_per_worker_buffer_size; "
              "the next run of this workload stays below " + std::to_string(workers)};
}

}  // namespace

std::vector<EventToRecord> RecordOomKills(const AttemptPods& attempts, std::map<int, Trial>& trials) {
  std::vector<EventToRecord> events;
  for (const auto& [attempt, pods] : attempts) {
    const int workers = pods.front()->workers;
    if (workers <= 0 || !AnyOomKilled(pods)) continue;  // not a value graintune set, or no OOM
    auto stored = trials.find(attempt);
    if (stored != trials.end() && stored->second.oom_killed) continue;
    Trial t = stored != trials.end() ? stored->second : Trial{};
    t.attempt = attempt;
    t.workers = workers;
    t.oom_killed = true;
    trials[attempt] = t;
    events.push_back(OomEvent(*pods.front(), attempt, workers));
  }
  return events;
}

std::vector<PodFacts> PodsAsStarted(const ReconcileInput& in) {
  std::vector<PodFacts> pods = in.pods;
  for (PodFacts& p : pods) {
    const auto doc = in.steps.find(p.attempt);
    if (doc == in.steps.end() || !doc->second.start_check) continue;
    const telemetry::StartCheckReport& check = *doc->second.start_check;
    if (check.started_value) p.workers = std::max(*check.started_value, 0);
    else if (check.fill_value) p.workers = 0;  // it failed open on a -1 it was to fill: MaxText's pick
  }
  return pods;
}

void MergeMeasuredTrials(const ReconcileInput& in, const AttemptPods& attempts, std::map<int, Trial>& trials) {
  const double tokens_per_step = in.inputs ? in.inputs->demand.tokens_per_step_per_host : 0;
  for (const auto& [attempt, pods] : attempts) {
    const int workers = pods.front()->workers;
    if (workers <= 0 || AnyOomKilled(pods)) continue;
    auto doc = in.steps.find(attempt);
    auto pre = in.measured.find(attempt);
    if (doc == in.steps.end() && pre == in.measured.end()) continue;
    Result<Trial> t = doc != in.steps.end()
                          ? TrialFromSteps(attempt, workers, doc->second, tokens_per_step, in.warmup_steps)
                          : Result<Trial>(pre->second);
    if (!t.ok() || t->samples < in.min_samples) continue;  // not enough steady steps yet
    auto stored = trials.find(attempt);
    if (stored != trials.end() && stored->second.samples > t->samples) continue;
    Trial updated = *t;
    // A drain seen earlier in the attempt stays seen: a long steady tail at the starved rate
    // hides it from the later window, but the chips did wait for data.
    if (stored != trials.end() && IsDataBound(stored->second)) updated.draining = true;
    trials[attempt] = updated;
  }
}

void RecordTrials(const std::vector<Trial>& trials, const std::vector<PodFacts>& pods, GrainTuningStatus& status) {
  if (!trials.empty()) {
    status.trials.clear();
    for (const Trial& t : trials) status.trials.push_back(workload::TrialStatusOf(t));
    status.last_trial = status.trials.back();
  }
  if (std::vector<int> ended = EndedAttempts(status, pods); !ended.empty()) status.ended_attempts = ended;
}

RunsAndPins RecordRunsAndPins(const std::vector<PodFacts>& pods, GrainTuningStatus& status) {
  const std::vector<workload::RunStatus> runs = RunsStatus(status, pods);
  if (!runs.empty()) status.runs = runs;
  RunsAndPins out{.pinned = NewestPinnedAttempt(workload::RunRecordsOf(runs), pods),
                  .ended_early = NewestEndedEarly(pods)};
  if (out.ended_early) status.ended_early = *out.ended_early;
  return out;
}

std::optional<RecommendationStatus> Recommendation(const std::optional<RecommendationStatus>& old,
                                                   const Decision& decision, const AttemptPods& attempts,
                                                   int newest, bool newest_measured,
                                                   const std::optional<PinnedAttempt>& pinned,
                                                   int next_run_workers) {
  if (newest_measured && pinned)
    return RecommendationStatus{
        .workers = pinned->run.workers,
        .attempt = newest + 1,
        .reason = PinnedRunReason(pinned->checkpoint_dir, newest + 1, pinned->run.workers, next_run_workers)};
  if (newest_measured)
    return RecommendationStatus{.workers = decision.workers,
                                .per_worker_buffer = decision.per_worker_buffer,
                                .attempt = newest + 1,
                                .reason = decision.reason};
  if (attempts.empty()) return old;
  const PodFacts& running = *attempts.rbegin()->second.front();
  // A practice lap's answer is the value its attempt runs with, in place of admission's.
  const bool lap_gave_value = running.lap_answer && running.workers != running.admission_workers;
  const bool has_value = old && old->workers;
  const bool lap_changed_it = lap_gave_value && old && old->attempt == newest && old->workers != running.workers;
  if (running.workers > 0 && (!has_value || lap_changed_it))
    return RecommendationStatus{
        .workers = running.workers,
        .attempt = newest,
        .reason = lap_gave_value ? "the value attempt " + std::to_string(newest) + "'s practice lap gave (admitted with " +
                                       std::to_string(running.admission_workers) + ")"
                                 : "the value attempt " + std::to_string(newest) + " was admitted with"};
  return old;
}

void StampDecidedAt(std::optional<RecommendationStatus>& rec, const std::optional<RecommendationStatus>& old,
                    const std::string& now) {
  if (!rec) return;
  RecommendationStatus same = *rec, before = old.value_or(RecommendationStatus{});
  same.decided_at.reset();
  before.decided_at.reset();
  if (same != before || rec->decided_at.value_or("").empty()) rec->decided_at = now;
}

workload::NextRunStatus NextRun(const TuningInputs& inputs, const std::vector<Trial>& trials,
                                const std::vector<PodFacts>& pods, const Decision& decision) {
  // The next run of this workload (a new checkpoint directory) starts from what all its
  // attempts measured; a run that resumes Grain's iterator keeps its own value meanwhile.
  // When this workload's runs keep their value, so will the next: it is decided as a value
  // kept for a whole run (decision.h), since it cannot be corrected at a restart.
  const bool runs_keep_value =
      std::any_of(pods.begin(), pods.end(), [](const PodFacts& p) { return p.pins_workers; });
  if (!runs_keep_value) return {.workers = decision.workers, .reason = decision.reason};
  TuningInputs next_run_inputs = inputs;
  next_run_inputs.lifetime = ValueLifetime::kRun;
  const Decision next_run = Decide(next_run_inputs, trials);
  return {.workers = next_run.workers, .reason = next_run.reason};
}

void Learn(const std::vector<Trial>& trials, const TuningInputs& inputs, GrainTuningStatus& status) {
  // What these attempts teach other runs (tuner/learning.h): kept here, read back by the
  // webhook for runs of the same dataset on the same machine type.
  // Whole tokens and bytes, as the trials are stored: the figures learned from the stored
  // trials then equal those learned from the live ones, and a reconcile writes nothing new.
  const LearnedFigures learned = LearnFromTrials(trials);
  workload::LearnedStatus taught;
  if (learned.tokens_per_second_per_worker) {
    status.learned_tokens_per_second_per_worker = std::round(*learned.tokens_per_second_per_worker);
    taught.tokens_per_second_per_worker = std::round(*learned.tokens_per_second_per_worker);
    taught.rate_basis = learned.rate_basis;
  }
  if (learned.worker_memory_bytes) taught.worker_memory_bytes = std::round(*learned.worker_memory_bytes);
  if (learned.fed_tokens_per_second_per_host) {
    taught.fed_tokens_per_second_per_host = std::round(*learned.fed_tokens_per_second_per_host);
    // Read back by the webhook as the demand of other workloads with the same model
    // settings and chips on this machine type (workload/demand_key.h).
    if (!inputs.demand.transfer_key.empty()) taught.demand_key = inputs.demand.transfer_key;
  }
  if (taught == workload::LearnedStatus{}) return;  // nothing learned: the stored figures stay
  if (!inputs.host.machine_type.empty()) taught.machine_type = inputs.host.machine_type;
  status.learned = taught;
}

namespace {

ConditionStatus Condition(const std::string& type, bool on, const std::string& reason, const std::string& message,
                          const std::vector<ConditionStatus>& old, const std::string& now) {
  const std::string status = on ? "True" : "False";
  std::string since = now;
  for (const ConditionStatus& c : old)
    if (c.type == type && c.status == status) since = c.last_transition_time.empty() ? now : c.last_transition_time;
  return {.type = type, .status = status, .last_transition_time = since, .reason = reason, .message = message};
}

}  // namespace

std::vector<ConditionStatus> Conditions(const ConditionFacts& f, const std::vector<ConditionStatus>& old,
                                        const std::string& now) {
  const bool converged = f.phase == "Converged";
  return {
      Condition("Converged", converged, converged ? "NoGainLeft" : "Exploring",
                converged ? "re-trying cannot gain beyond measurement noise" : "another attempt may improve throughput",
                old, now),
      Condition("CappedByOOM", f.capped, f.capped ? "OOMKilled" : "NoOOM",
                f.capped ? "an attempt was OOMKilled; the value stays below it" : "no attempt was OOMKilled", old,
                now),
      Condition("MetricsAvailable", f.trials > 0, f.trials == 0 ? "NoTrialYet" : "TrialRecorded",
                f.trials == 0 ? "no attempt has reported enough steady-state steps yet"
                              : std::to_string(f.trials) + " trial(s) recorded",
                old, now),
      Condition("ValuePinned", f.pinned.has_value(), f.pinned ? "GrainIteratorCheckpoint" : "NothingRestoresIt",
                f.pinned.value_or("no running attempt restores Grain's iterator from a checkpoint: the value may change"),
                old, now),
      Condition("EndedEarly", f.ended_early.has_value(), f.ended_early ? "StoppedBeforeLastStep" : "NoneEndedEarly",
                f.ended_early.value_or("no attempt exited before its configured steps"), old, now)};
}

std::string EndedEarlyMessage(const EndedEarly& e) {
  return "attempt " + std::to_string(e.attempt) + " (pod " + e.pod + ") exited 0 after step " +
         std::to_string(e.last_step) + " of " + std::to_string(e.steps) +
         ": MaxText stopped before its last step (a resume that could not restore "
         "Grain's iterator does that); look for 'Training stopped' in its log";
}

std::vector<EventToRecord> StatusEvents(const GrainTuningStatus& old, const RunsAndPins& runs,
                                        std::optional<int> next_run_workers, GrainTuningStatus& status) {
  std::vector<EventToRecord> events;
  const std::optional<RecommendationStatus>& rec = status.recommendation;
  const std::optional<RecommendationStatus>& old_rec = old.recommendation;
  if (rec && rec->workers && old_rec && old_rec->workers && *rec->workers != *old_rec->workers)
    events.push_back({"Normal", "RecommendationChanged",
                      std::to_string(*old_rec->workers) + " -> " + std::to_string(*rec->workers) +
                          " Grain workers for attempt " + std::to_string(rec->attempt.value_or(0)) + ": " +
                          rec->reason.value_or("")});
  if (runs.ended_early && old.ended_early != status.ended_early)
    events.push_back({"Warning", "EndedEarly", EndedEarlyMessage(*runs.ended_early)});
  // Once per restart of a pinned run: the attempt that kept its run's value.
  if (const std::optional<PinnedAttempt>& pinned = runs.pinned; pinned && pinned->attempt > pinned->run.first_attempt) {
    status.pinned_attempt = pinned->attempt;
    if (old.pinned_attempt.value_or(-1) != pinned->attempt)
      events.push_back({"Normal", "ValuePinned",
                        PinnedRunReason(pinned->checkpoint_dir, pinned->attempt, pinned->run.workers,
                                        next_run_workers)});
  }
  if (status.phase == "Converged" && old.phase != "Converged")
    events.push_back({"Normal", "Converged",
                      "grain_worker_count " + std::to_string(rec ? rec->workers.value_or(0) : 0) +
                          ": re-trying cannot gain beyond measurement noise"});
  return events;
}


}  // namespace graintune::op
