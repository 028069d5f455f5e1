#include "operator/tuning_reconciler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "base/rfc3339.h"
#include "operator/reconcile_launcher_steps.h"
#include "operator/reconcile_steps.h"
#include "workload/grain_tuning_status.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

}  // namespace

Result<Trial> TrialFromSteps(int attempt, int workers, const telemetry::StepsDocument& doc,
                             double tokens_per_step_per_host, int warmup_steps) {
  std::vector<telemetry::StepSample> steps = doc.steps;
  std::sort(steps.begin(), steps.end(),
            [](const telemetry::StepSample& a, const telemetry::StepSample& b) { return a.step < b.step; });
  std::vector<double> seconds;
  for (const telemetry::StepSample& s : steps) seconds.push_back(s.step_time_seconds);
  Result<Trial> t = SummarizeSteps(seconds, tokens_per_step_per_host, warmup_steps);
  if (!t.ok()) return t;
  Trial trial = *t;
  trial.attempt = attempt;
  trial.workers = workers;
  // Time-weighted: FLOPs done over time taken. A plain mean of per-step figures would count the
  // near-zero steps of asynchronous dispatch as enormous rates.
  double flops = 0, seconds_total = 0;
  for (size_t i = static_cast<size_t>(std::max(0, warmup_steps)); i < steps.size(); ++i)
    if (steps[i].tflops_per_device > 0) {
      flops += steps[i].tflops_per_device * steps[i].step_time_seconds;
      seconds_total += steps[i].step_time_seconds;
    }
  if (seconds_total > 0) trial.tflops_per_device = flops / seconds_total;
  if (doc.process) {
    trial.worker_busy_fraction = doc.process->worker_busy_fraction;
    trial.worker_memory_bytes = doc.process->worker_memory_bytes;
    trial.trainer_memory_bytes = doc.process->trainer_memory_bytes;
    trial.trainer_cpu_cores = doc.process->trainer_cpu_cores;
  }
  return trial;
}

std::map<int, Trial> BoundTrials(std::map<int, Trial> trials, size_t max) {
  if (max == 0) max = 1;
  if (trials.size() <= max) return trials;
  const int newest = trials.rbegin()->first;
  // Oldest first: a trial repeated later (same workers, same outcome) says nothing new.
  std::set<std::pair<int, bool>> seen_later;
  for (auto it = trials.rbegin(); it != trials.rend() && trials.size() > max;) {
    const std::pair<int, bool> what{it->second.workers, it->second.oom_killed};
    if (it->first != newest && seen_later.count(what)) {
      it = std::make_reverse_iterator(trials.erase(std::next(it).base()));
    } else {
      seen_later.insert(what);
      ++it;
    }
  }
  for (bool drop_oom : {false, true})
    for (auto it = trials.begin(); it != trials.end() && trials.size() > max;)
      if (it->first != newest && (drop_oom || !it->second.oom_killed)) it = trials.erase(it);
      else ++it;
  return trials;
}

bool Forgettable(const json& gt, std::chrono::seconds forget_after, std::time_t now) {
  if (forget_after.count() <= 0 || !gt.is_object()) return false;
  const json meta = gt.value("metadata", json::object());
  const workload::GrainTuningStatus status = workload::StatusOf(gt);
  std::vector<std::string> times = {meta.value("creationTimestamp", "")};
  if (status.recommendation) times.push_back(status.recommendation->decided_at.value_or(""));
  if (status.last_trial) times.push_back(status.last_trial->end_time.value_or(""));
  for (const workload::ConditionStatus& c : status.conditions) times.push_back(c.last_transition_time);
  std::optional<std::time_t> last;
  for (const std::string& t : times)
    if (std::optional<std::time_t> v = ParseRfc3339(t); v && (!last || *v > *last)) last = v;
  return last && now - *last > forget_after.count();
}

std::vector<int> EndedAttempts(const workload::GrainTuningStatus& status, const std::vector<PodFacts>& pods) {
  std::set<int> with_trial, ended;
  for (const workload::TrialStatus& t : status.trials) {
    if (t.attempt < 0) continue;
    with_trial.insert(t.attempt);
    const bool alive = std::any_of(pods.begin(), pods.end(), [&](const PodFacts& p) {
      return p.attempt == t.attempt && p.Alive();
    });
    if (!alive) ended.insert(t.attempt);
  }
  for (int a : status.ended_attempts)
    if (with_trial.count(a)) ended.insert(a);
  return {ended.begin(), ended.end()};
}

ReconcileOutput ReconcileTuning(const ReconcileInput& in) {
  ReconcileOutput out;
  const workload::GrainTuningStatus old =
      in.grain_tuning ? workload::StatusOf(*in.grain_tuning) : workload::GrainTuningStatus{};
  const workload::GrainTuningSpec spec = in.grain_tuning ? workload::SpecOf(*in.grain_tuning) : workload::GrainTuningSpec{};
  if (!in.grain_tuning) out.object = workload::NewGrainTuning(in.ns, SpecForNewGrainTuning(in));
  // 0. The pods as their trainers started.
  const std::vector<PodFacts> pods = PodsAsStarted(in);
  const AttemptPods attempts = PodsByAttempt(pods);

  // 1. Trials: stored ones, then what the pods show now.
  std::map<int, Trial> trials = StoredTrials(old);
  out.events = RecordOomKills(attempts, trials);
  MergeMeasuredTrials(in, attempts, trials);
  trials = BoundTrials(std::move(trials));
  std::vector<Trial> list;
  for (const auto& [a, t] : trials) list.push_back(t);
  workload::GrainTuningStatus status = old;
  RecordTrials(list, pods, status);
  // 2. Runs and pins.
  const RunsAndPins runs = RecordRunsAndPins(pods, status);
  out.lap_answer = RecordLap(in, attempts, status, out.events);
  RecordTrainerCompile(in, status, out.events);
  RecordLapStarts(in, status, out.events);
  RecordStartCheck(in, status, out.events);

  // 3.-5. Recommend, next run, learn.
  const int newest = NewestAttempt(attempts, list);
  const bool newest_measured = trials.count(newest) > 0;
  std::optional<workload::RecommendationStatus> rec = old.recommendation;
  std::string phase = old.phase.value_or("Exploring");
  if (!in.inputs) {
    out.problem = "cannot read the workload's MaxText settings from its pods";
  } else {
    const Decision d = Decide(*in.inputs, list);
    phase = ToString(d.phase);
    if (newest_measured) status.next_run = NextRun(*in.inputs, list, pods, d);
    const int next_run_workers = status.next_run ? status.next_run->workers.value_or(0) : 0;
    rec = Recommendation(old.recommendation, d, attempts, newest, newest_measured, runs.pinned, next_run_workers);
    Learn(list, *in.inputs, status);
  }
  const std::string mode = spec.mode.value_or(in.inputs ? ToString(in.inputs->policy.mode) : "Auto");
  if (spec.paused.value_or(false) || mode == "Off") phase = "Paused";
  if (rec && *rec != workload::RecommendationStatus{}) {
    StampDecidedAt(rec, old.recommendation, in.now);
    status.recommendation = rec;
  }
  status.phase = phase;

  // 6. Conditions.
  const std::optional<int> next_run_workers =
      status.next_run ? std::optional<int>(status.next_run->workers.value_or(0)) : std::nullopt;
  ConditionFacts facts{.phase = phase, .trials = list.size()};
  facts.capped = std::any_of(list.begin(), list.end(), [](const Trial& t) { return t.oom_killed; });
  if (runs.pinned)
    facts.pinned = PinnedRunReason(runs.pinned->checkpoint_dir, newest + (newest_measured ? 1 : 0),
                                   runs.pinned->run.workers, next_run_workers);
  if (runs.ended_early) facts.ended_early = EndedEarlyMessage(*runs.ended_early);
  status.conditions = Conditions(facts, old.conditions, in.now);

  // 7. Events (status.pinnedAttempt with them: a restart's mark is not a change to write).
  out.status_changed = !workload::StatusEquivalent(status, old);
  for (EventToRecord& e : StatusEvents(old, runs, next_run_workers, status)) out.events.push_back(std::move(e));
  out.status = workload::ToJson(status);
  return out;
}

}  // namespace graintune::op
