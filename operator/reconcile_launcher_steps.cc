#include "operator/reconcile_launcher_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "contract/lap_answer_text.h"
#include "operator/lap_answer.h"

namespace graintune::op {

using workload::GrainTuningStatus;

namespace {

// `v` to `decimals` places (60.3, not 60.300000000000004 as 603 * 0.1 gives).
double Rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// status.lap for `answer` to the laps of `attempt`'s pods.
workload::LapStatus LapStatusOf(int attempt, const std::vector<const PodFacts*>& pods, const LapAnswer& answer,
                                const std::string& now) {
  workload::LapStatus lap{.attempt = attempt, .answer = answer.text, .answered_at = now};
  for (const PodFacts* p : pods) lap.admission_workers = std::max(lap.admission_workers, p->admission_workers);
  if (answer.decision) lap.workers = answer.decision->workers;
  lap.hosts = static_cast<int>(answer.laps.size());
  if (answer.laps.empty()) return lap;
  lap.wall_seconds = Rounded(answer.wall_seconds, 1);
  // The slowest host's step and busy share (it sets the run's value), the highest memory.
  const auto slowest = std::max_element(answer.laps.begin(), answer.laps.end(), [](const LapFigures& a, const LapFigures& b) {
    return a.step_seconds < b.step_seconds;
  });
  lap.step_seconds = Rounded(slowest->step_seconds, 3);
  lap.worker_busy_fraction = Rounded(slowest->worker_busy_fraction, 3);
  double memory = 0;
  for (const LapFigures& l : answer.laps) memory = std::max(memory, l.worker_memory_bytes);
  lap.worker_memory_bytes = std::round(memory);
  return lap;
}

EventToRecord LapEvent(const workload::LapStatus& lap) {
  if (lap.workers)
    return {"Normal", "LapAnswered",
            "practice laps of " + std::to_string(lap.hosts) + " hosts: the run keeps grain_worker_count=" +
                std::to_string(*lap.workers) + " (admission gave " + std::to_string(lap.admission_workers) + ")"};
  const Result<contract::LapAnswerText> answer = contract::ParseLapAnswerText(lap.answer);
  return {"Warning", "LapGaveNoValue",
          "the run keeps admission's grain_worker_count=" + std::to_string(lap.admission_workers) + ": " +
              (answer.ok() ? answer.value().why : lap.answer)};
}

}  // namespace

std::optional<LapAnswerWrite> RecordLap(const ReconcileInput& in, const AttemptPods& attempts,
                                        workload::GrainTuningStatus& status, std::vector<EventToRecord>& events) {
  if (!in.inputs) return std::nullopt;
  for (const auto& [attempt, pods] : attempts) {
    LapAnswerWrite write;
    for (const PodFacts* p : pods)
      if (p->AwaitsLapAnswer() && !p->terminating) write.pods.push_back(p->name);
    if (write.pods.empty()) continue;
    // Once recorded, the answer is the attempt's: a pod seen waiting again (a cache behind the
    // patches, a pod created late) gets the same, never one decided anew.
    if (status.lap && status.lap->attempt == attempt) {
      write.answer = status.lap->answer;
      return write;
    }
    std::vector<PodFacts> facts;
    for (const PodFacts* p : pods) facts.push_back(*p);
    const std::optional<LapAnswer> answer = AnswerLaps(facts, in.laps, *in.inputs, in.warmup_steps);
    if (!answer) continue;
    write.answer = answer->text;
    status.lap = LapStatusOf(attempt, pods, *answer, in.now);
    events.push_back(LapEvent(*status.lap));
    return write;
  }
  return std::nullopt;
}

namespace {

// The first verdict on the trainer's compile that a pod of `attempt` reported.
std::optional<contract::TrainerCompileVerdict> ReportedTrainerCompile(const ReconcileInput& in, int attempt) {
  if (auto doc = in.steps.find(attempt); doc != in.steps.end() && doc->second.lap && doc->second.lap->result &&
                                         doc->second.lap->result->trainer_compile)
    return doc->second.lap->result->trainer_compile;
  for (const PodFacts& p : in.pods) {
    if (p.attempt != attempt) continue;
    if (auto lap = in.laps.find(p.uid); lap != in.laps.end() && lap->second.result && lap->second.result->trainer_compile)
      return lap->second.result->trainer_compile;
  }
  return std::nullopt;
}

}  // namespace

void RecordTrainerCompile(const ReconcileInput& in, GrainTuningStatus& status, std::vector<EventToRecord>& events) {
  if (!status.lap || status.lap->trainer_compile) return;
  const std::optional<contract::TrainerCompileVerdict> verdict = ReportedTrainerCompile(in, status.lap->attempt);
  if (!verdict) return;
  status.lap->trainer_compile = contract::TrainerCompileStatusName(verdict->verdict);
  switch (verdict->verdict) {
    case contract::TrainerCompile::kCacheHit:
      events.push_back({"Normal", "LapTrainerCompile",
                        "the trainer found its train step in the JAX compilation cache its practice lap filled"});
      return;
    case contract::TrainerCompile::kCompiled:
      events.push_back({"Normal", "LapTrainerCompile",
                        "the trainer compiled its train step again: its program differs from its practice lap's"});
      return;
    case contract::TrainerCompile::kUnknown:
      break;
  }
  status.lap->trainer_compile_why = verdict->why.substr(0, contract::kMaxLapOutcomeBytes);
  events.push_back({"Normal", "LapTrainerCompile",
                    "whether the trainer found its train step in the JAX cache its lap filled is unknown: " + verdict->why});
}

void RecordLapStarts(const ReconcileInput& in, GrainTuningStatus& status, std::vector<EventToRecord>& events) {
  if (!status.lap) return;
  std::map<int, int> hosts_by_value;
  for (const PodFacts& p : in.pods) {
    if (p.attempt != status.lap->attempt) continue;
    const auto lap = in.laps.find(p.uid);
    if (lap != in.laps.end() && lap->second.result && lap->second.result->trainer_workers)
      ++hosts_by_value[*lap->second.result->trainer_workers];
  }
  int hosts = 0;
  for (const auto& [value, count] : hosts_by_value) hosts += count;
  std::set<int> values(status.lap->started_values.begin(), status.lap->started_values.end());
  const bool was_mixed = values.size() > 1;
  for (const auto& [value, count] : hosts_by_value) values.insert(value);
  // Hosts only add to what was recorded: a host whose exporter is not read this time still started.
  if (hosts <= status.lap->started_hosts && values.size() == status.lap->started_values.size()) return;
  status.lap->started_hosts = std::max(status.lap->started_hosts, hosts);
  status.lap->started_values.assign(values.begin(), values.end());
  if (status.lap->started_values.size() > workload::kMaxLapStartedValues)
    status.lap->started_values.resize(workload::kMaxLapStartedValues);
  if (values.size() < 2 || was_mixed) return;
  std::string seen;
  for (const auto& [value, count] : hosts_by_value)
    seen += (seen.empty() ? "" : ", ") + std::to_string(value) + " on " + std::to_string(count) +
            (count == 1 ? " host" : " hosts");
  events.push_back({"Warning", "LapStartedMixedValues",
                    "the hosts of attempt " + std::to_string(status.lap->attempt) +
                        " started their trainers with different grain_worker_count values (" + seen +
                        "): their checkpoints would hold Grain iterators of different counts, which no "
                        "single value can resume; stop the attempt before its first checkpoint"});
}

namespace {

std::string CountText(const std::optional<int>& count) {
  if (!count) return "a count graintune could not read";
  return *count == -1 ? "-1 (MaxText's own pick)" : std::to_string(*count);
}

EventToRecord StartCheckEvent(const workload::StartCheckStatus& c) {
  const std::string pod = "pod " + c.pod + " (attempt " + std::to_string(c.attempt) + "): ";
  if (!c.checked)
    return {"Warning", "StartCheckFailedOpen",
            pod + "the start check could not read the trainer's start (" + c.why + "); it started as written"};
  if (c.started_workers != c.written_workers || (c.admission_workers && c.started_workers != c.admission_workers))
    return {"Warning", "StartCheckChangedValue",
            pod + "graintune wrote " + CountText(c.admission_workers) + " and MaxText read the start as " +
                CountText(c.written_workers) + "; the trainer runs with " + CountText(c.started_workers) + ": " + c.why};
  return {"Normal", "StartCheck", pod + "the trainer runs with " + CountText(c.started_workers) + ": " + c.why};
}

}  // namespace

void RecordStartCheck(const ReconcileInput& in, GrainTuningStatus& status, std::vector<EventToRecord>& events) {
  for (auto it = in.steps.rbegin(); it != in.steps.rend(); ++it) {
    const auto& [attempt, doc] = *it;
    if (!doc.start_check) continue;
    if (status.start_check && status.start_check->attempt >= attempt) return;  // recorded once
    const telemetry::StartCheckReport& r = *doc.start_check;
    workload::StartCheckStatus c{.attempt = attempt,
                                 .checked = r.checked,
                                 .admission_workers = r.admission_value,
                                 .written_workers = r.written_value,
                                 .started_workers = r.started_value,
                                 .why = r.why.substr(0, 2048)};
    for (const PodFacts& p : in.pods)
      if (!doc.pod_uid.empty() && p.uid == doc.pod_uid) c.pod = p.name;
    if (r.checkpoint) {
      c.saved_workers = r.checkpoint->saved_workers;
      if (r.checkpoint->step) c.checkpoint_step = *r.checkpoint->step;
    }
    if (!r.dataset_type.empty()) c.dataset_type = r.dataset_type.substr(0, 64);
    events.push_back(StartCheckEvent(c));
    status.start_check = std::move(c);
    return;
  }
}

}  // namespace graintune::op
