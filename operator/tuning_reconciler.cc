#include "operator/tuning_reconciler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "base/rfc3339.h"
#include "operator/run_records.h"
#include "operator/status_compare.h"
#include "tuner/learning.h"
#include "workload/graintune_objects.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

json Condition(const std::string& type, bool on, const std::string& reason,
               const std::string& message, const json& old_conditions, const std::string& now) {
  std::string since = now;
  if (old_conditions.is_array())
    for (const json& c : old_conditions)
      if (c.value("type", "") == type && c.value("status", "") == (on ? "True" : "False"))
        since = c.value("lastTransitionTime", now);
  return {{"type", type}, {"status", on ? "True" : "False"}, {"reason", reason},
          {"message", message}, {"lastTransitionTime", since}};
}

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
  const json status = gt.value("status", json::object());
  std::vector<std::string> times = {meta.value("creationTimestamp", "")};
  times.push_back(status.value("recommendation", json::object()).value("decidedAt", ""));
  times.push_back(status.value("lastTrial", json::object()).value("endTime", ""));
  const json conditions = status.value("conditions", json::array());
  if (conditions.is_array())
    for (const json& c : conditions)
      if (c.is_object()) times.push_back(c.value("lastTransitionTime", ""));
  std::optional<std::time_t> last;
  for (const std::string& t : times)
    if (std::optional<std::time_t> v = ParseRfc3339(t); v && (!last || *v > *last)) last = v;
  return last && now - *last > forget_after.count();
}

std::vector<int> EndedAttempts(const json& status, const std::vector<PodFacts>& pods) {
  std::set<int> with_trial, ended;
  const json trials = status.value("trials", json::array());
  if (trials.is_array())
    for (const json& t : trials) {
      if (!t.is_object() || !t.contains("attempt") || !t["attempt"].is_number_integer()) continue;
      const int attempt = t["attempt"].get<int>();
      if (attempt < 0) continue;
      with_trial.insert(attempt);
      const bool alive = std::any_of(pods.begin(), pods.end(), [&](const PodFacts& p) {
        return p.attempt == attempt && p.Alive();
      });
      if (!alive) ended.insert(attempt);
    }
  const json stored = status.value("endedAttempts", json::array());
  if (stored.is_array())
    for (const json& a : stored)
      if (a.is_number_integer() && with_trial.count(a.get<int>())) ended.insert(a.get<int>());
  return {ended.begin(), ended.end()};
}

ReconcileOutput ReconcileTuning(const ReconcileInput& in) {
  ReconcileOutput out;
  const json gt = in.grain_tuning.value_or(json::object());
  const json old_status = gt.value("status", json::object());
  const json spec_in = gt.value("spec", json::object());

  // The workload and the attempts its pods belong to.
  std::map<int, std::vector<const PodFacts*>> attempts;
  for (const PodFacts& p : in.pods) attempts[p.attempt].push_back(&p);
  const PodFacts* any = in.pods.empty() ? nullptr : &in.pods.front();

  if (!in.grain_tuning) {
    json spec = {{"tuningKey", in.tuning_key},
                 {"mode", in.inputs ? ToString(in.inputs->policy.mode) : "Auto"}};
    if (any)
      spec["workload"] = {{"kind", any->owner_kind}, {"name", any->owner_name},
                          {"apiVersion", any->owner_kind == "JobSet" ? "jobset.x-k8s.io/v1alpha2"
                                         : any->owner_kind == "Job"  ? "batch/v1" : "v1"}};
    if (!in.policy_name.empty()) spec["policyName"] = in.policy_name;
    if (any && !any->dataset.empty()) spec["dataset"] = any->dataset;
    if (!in.dataset_kind.empty()) spec["datasetKind"] = in.dataset_kind;
    if (in.inputs) {
      spec["minWorkers"] = in.inputs->policy.min_workers;
      spec["maxWorkers"] = in.inputs->policy.max_workers;
    }
    out.object = {{"apiVersion", "graintune.dev/v1alpha1"},
                  {"kind", "GrainTuning"},
                  {"metadata", {{"name", workload::GrainTuningName(in.tuning_key)},
                                {"namespace", in.ns},
                                {"labels", {{"graintune.dev/tuning-key-hash",
                                             workload::GrainTuningName(in.tuning_key).substr(0, 63)}}}}},
                  {"spec", spec}};
  }

  // Trials: stored ones, then what the pods show now.
  std::map<int, Trial> trials;
  for (const Trial& t : workload::TrialsOf(gt)) trials[t.attempt] = t;
  const double tokens_per_step = in.inputs ? in.inputs->demand.tokens_per_step_per_host : 0;
  for (const auto& [attempt, pods] : attempts) {
    const int workers = pods.front()->workers;
    if (workers <= 0) continue;  // not a value graintune set
    const bool oom = std::any_of(pods.begin(), pods.end(), [](const PodFacts* p) { return p->oom_killed; });
    auto stored = trials.find(attempt);
    if (oom) {
      if (stored == trials.end() || !stored->second.oom_killed) {
        Trial t = stored != trials.end() ? stored->second : Trial{};
        t.attempt = attempt;
        t.workers = workers;
        t.oom_killed = true;
        trials[attempt] = t;
        const PodFacts& pod = *pods.front();
        if (pod.pins_workers)
          out.events.push_back(
              {"Warning", "OOMKilledInPinnedRun",
               "attempt " + std::to_string(attempt) + " was OOMKilled with " + std::to_string(workers) +
                   " Grain workers, and this run resumes Grain's iterator from its checkpoints (" +
                   pod.checkpoint_dir + "): its next attempt keeps " + std::to_string(workers) +
                   " (another count would stop MaxText early). Ways out: grain_use_elastic_iterator=true "
                   "with packing=false, a new run_name, or a smaller grain_per_worker_buffer_size; "
                   "the next run of this workload stays below " + std::to_string(workers)});
        else
          out.events.push_back({"Warning", "CappedByOOM",
                                "attempt " + std::to_string(attempt) + " was OOMKilled with " +
                                    std::to_string(workers) + " Grain workers; later attempts stay below"});
      }
      continue;
    }
    auto doc = in.steps.find(attempt);
    auto pre = in.measured.find(attempt);
    if (doc == in.steps.end() && pre == in.measured.end()) continue;
    Result<Trial> t = doc != in.steps.end()
                          ? TrialFromSteps(attempt, workers, doc->second, tokens_per_step, in.warmup_steps)
                          : Result<Trial>(pre->second);
    if (!t.ok() || t->samples < in.min_samples) continue;  // not enough steady steps yet
    if (stored == trials.end() || stored->second.samples <= t->samples) {
      Trial updated = *t;
      // A drain seen earlier in the attempt stays seen: a long steady tail at the starved rate
      // hides it from the later window, but the chips did wait for data.
      if (stored != trials.end() && IsDataBound(stored->second)) updated.draining = true;
      trials[attempt] = updated;
    }
  }
  trials = BoundTrials(std::move(trials));
  std::vector<Trial> list;
  for (const auto& [a, t] : trials) list.push_back(t);

  json status = old_status;
  json trial_json = json::array();
  for (const Trial& t : list) trial_json.push_back(workload::TrialToJson(t));
  if (!list.empty()) {
    status["trials"] = trial_json;
    status["lastTrial"] = trial_json.back();
  }
  if (std::vector<int> ended = EndedAttempts(status, in.pods); !ended.empty())
    status["endedAttempts"] = ended;
  const json runs = RunsStatus(old_status, in.pods);
  if (!runs.empty()) status["runs"] = runs;
  const std::optional<PinnedAttempt> pinned = NewestPinnedAttempt(workload::RunsFromList(runs), in.pods);
  const std::optional<EndedEarly> ended_early = NewestEndedEarly(in.pods);
  if (ended_early) status["endedEarly"] = ToJson(*ended_early);

  const int newest = attempts.empty() ? (list.empty() ? 0 : list.back().attempt)
                                      : attempts.rbegin()->first;
  const json old_rec = old_status.value("recommendation", json::object());
  json rec = old_rec;
  std::string phase = old_status.value("phase", "Exploring");
  const std::string mode = spec_in.value("mode", in.inputs ? ToString(in.inputs->policy.mode) : "Auto");
  if (!in.inputs) {
    out.problem = "cannot read the workload's MaxText settings from its pods";
  } else {
    const Decision d = Decide(*in.inputs, list);
    phase = ToString(d.phase);
    if (trials.count(newest)) {
      // The next run of this workload (a new checkpoint directory) starts from what all its
      // attempts measured; a run that resumes Grain's iterator keeps its own value meanwhile.
      // When this workload's runs keep their value, so will the next: it is decided as a value
      // kept for a whole run (decision.h), since it cannot be corrected at a restart.
      const bool runs_keep_value =
          std::any_of(in.pods.begin(), in.pods.end(), [](const PodFacts& p) { return p.pins_workers; });
      TuningInputs next_run_inputs = *in.inputs;
      if (runs_keep_value) next_run_inputs.lifetime = ValueLifetime::kRun;
      const Decision next_run = runs_keep_value ? Decide(next_run_inputs, list) : d;
      status["nextRun"] = {{"workers", next_run.workers}, {"reason", next_run.reason}};
      if (pinned)
        rec = {{"workers", pinned->run.workers}, {"attempt", newest + 1},
               {"reason", PinnedRunReason(pinned->checkpoint_dir, newest + 1, pinned->run.workers,
                                          next_run.workers)}};
      else
        rec = {{"workers", d.workers}, {"perWorkerBuffer", d.per_worker_buffer},
               {"attempt", newest + 1}, {"reason", d.reason}};
    } else if (!rec.contains("workers") && !attempts.empty() && attempts.rbegin()->second.front()->workers > 0) {
      rec = {{"workers", attempts.rbegin()->second.front()->workers},
             {"attempt", newest},
             {"reason", "the value attempt " + std::to_string(newest) + " was admitted with"}};
    }
    // What these attempts teach other runs (tuner/learning.h): kept here, read back by the
    // webhook for runs of the same dataset on the same machine type.
    // Whole tokens and bytes, as the trials are stored: the figures learned from the stored
    // trials then equal those learned from the live ones, and a reconcile writes nothing new.
    const LearnedFigures learned = LearnFromTrials(list);
    json taught = json::object();
    if (!in.inputs->host.machine_type.empty()) taught["machineType"] = in.inputs->host.machine_type;
    if (learned.tokens_per_second_per_worker) {
      status["learnedTokensPerSecondPerWorker"] = std::round(*learned.tokens_per_second_per_worker);
      taught["tokensPerSecondPerWorker"] = std::round(*learned.tokens_per_second_per_worker);
      taught["rateBasis"] = learned.rate_basis;
    }
    if (learned.worker_memory_bytes) taught["workerMemoryBytes"] = std::round(*learned.worker_memory_bytes);
    if (learned.fed_tokens_per_second_per_host) {
      taught["fedTokensPerSecondPerHost"] = std::round(*learned.fed_tokens_per_second_per_host);
      // Read back by the webhook as the demand of other workloads with the same model
      // settings and chips on this machine type (workload/demand_key.h).
      if (!in.inputs->demand.transfer_key.empty()) taught["demandKey"] = in.inputs->demand.transfer_key;
    }
    if (taught.size() > (taught.contains("machineType") ? 1u : 0u)) status["learned"] = taught;
  }
  if (spec_in.value("paused", false) || mode == "Off") phase = "Paused";
  if (!rec.empty()) {
    rec["decidedAt"] = rec.value("decidedAt", "");
    if (!StatusEquivalent(json{{"recommendation", rec}}, json{{"recommendation", old_rec}}) ||
        rec["decidedAt"] == "")
      rec["decidedAt"] = in.now;
    status["recommendation"] = rec;
  }
  status["phase"] = phase;
  const json old_conditions = old_status.value("conditions", json::array());
  const bool capped = std::any_of(list.begin(), list.end(), [](const Trial& t) { return t.oom_killed; });
  status["conditions"] = json::array(
      {Condition("Converged", phase == "Converged", phase == "Converged" ? "NoGainLeft" : "Exploring",
                 phase == "Converged" ? "re-trying cannot gain beyond measurement noise"
                                      : "another attempt may improve throughput",
                 old_conditions, in.now),
       Condition("CappedByOOM", capped, capped ? "OOMKilled" : "NoOOM",
                 capped ? "an attempt was OOMKilled; the value stays below it" : "no attempt was OOMKilled",
                 old_conditions, in.now),
       Condition("MetricsAvailable", !list.empty(), list.empty() ? "NoTrialYet" : "TrialRecorded",
                 list.empty() ? "no attempt has reported enough steady-state steps yet"
                              : std::to_string(list.size()) + " trial(s) recorded",
                 old_conditions, in.now)});
  const std::optional<int> next_run_workers =
      status.contains("nextRun") ? std::optional<int>(status["nextRun"].value("workers", 0)) : std::nullopt;
  const std::string pinned_message =
      pinned ? PinnedRunReason(pinned->checkpoint_dir, newest + (trials.count(newest) ? 1 : 0),
                               pinned->run.workers, next_run_workers)
             : "";
  status["conditions"].push_back(Condition(
      "ValuePinned", pinned.has_value(), pinned ? "GrainIteratorCheckpoint" : "NothingRestoresIt",
      pinned ? pinned_message
             : "no running attempt restores Grain's iterator from a checkpoint: the value may change",
      old_conditions, in.now));
  const std::string ended_message =
      ended_early ? "attempt " + std::to_string(ended_early->attempt) + " (pod " + ended_early->pod +
                        ") exited 0 after step " + std::to_string(ended_early->last_step) + " of " +
                        std::to_string(ended_early->steps) +
                        ": MaxText stopped before its last step (a resume that could not restore "
                        "Grain's iterator does that); look for 'Training stopped' in its log"
                  : "";
  status["conditions"].push_back(Condition(
      "EndedEarly", ended_early.has_value(), ended_early ? "StoppedBeforeLastStep" : "NoneEndedEarly",
      ended_early ? ended_message : "no attempt exited before its configured steps", old_conditions, in.now));

  out.status_changed = !StatusEquivalent(status, old_status);
  const int old_workers = old_rec.value("workers", 0);
  if (rec.contains("workers") && old_rec.contains("workers") && rec["workers"] != old_rec["workers"])
    out.events.push_back({"Normal", "RecommendationChanged",
                          std::to_string(old_workers) + " -> " + std::to_string(rec["workers"].get<int>()) +
                              " Grain workers for attempt " + std::to_string(rec.value("attempt", 0)) +
                              ": " + rec.value("reason", "")});
  if (ended_early && old_status.value("endedEarly", json::object()) != status["endedEarly"])
    out.events.push_back({"Warning", "EndedEarly", ended_message});
  // Once per restart of a pinned run: the attempt that kept its run's value.
  if (pinned && pinned->attempt > pinned->run.first_attempt) {
    status["pinnedAttempt"] = pinned->attempt;
    if (old_status.value("pinnedAttempt", -1) != pinned->attempt)
      out.events.push_back({"Normal", "ValuePinned",
                            PinnedRunReason(pinned->checkpoint_dir, pinned->attempt, pinned->run.workers,
                                            next_run_workers)});
  }
  if (phase == "Converged" && old_status.value("phase", "") != "Converged")
    out.events.push_back({"Normal", "Converged",
                          "grain_worker_count " + std::to_string(rec.value("workers", 0)) +
                              ": re-trying cannot gain beyond measurement noise"});
  out.status = status;
  return out;
}

}  // namespace graintune::op
