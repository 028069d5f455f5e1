// Each step of ReconcileTuning() alone, over plain values.
#include "operator/reconcile_launcher_steps.h"
#include "operator/reconcile_steps.h"

#include <gtest/gtest.h>

#include <cmath>

#include "operator/reconcile_fixtures_for_test.h"

namespace graintune::op {
namespace {

using workload::ConditionStatus;
using workload::GrainTuningStatus;
using workload::RecommendationStatus;

constexpr char kNow[] = "2026-11-30T06:00:00Z";

ReconcileInput InputFor(std::vector<PodFacts> pods, std::map<int, telemetry::StepsDocument> steps = {}) {
  ReconcileInput in;
  in.ns = "default";
  in.tuning_key = "llama";
  in.pods = std::move(pods);
  in.steps = std::move(steps);
  in.inputs = SeedInputs();
  in.now = kNow;
  return in;
}

PodFacts Pinned(PodFacts p) {
  p.pins_workers = true;
  p.checkpoint_dir = "gs://ckpt/llama/checkpoints";
  return p;
}

Trial Measured(int attempt, int workers, int samples = 20) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.samples = samples;
  t.step_seconds_p50 = t.step_seconds_mean = 4.3;
  return t;
}

TEST(ReconcileStepsTest, ANewGrainTuningNamesItsWorkloadPolicyAndBounds) {
  ReconcileInput in = InputFor({Pod(0, 4)});
  in.pods[0].dataset = "c4";
  in.policy_name = "team-llm";
  in.dataset_kind = "raw-text";
  const workload::GrainTuningSpec spec = SpecForNewGrainTuning(in);
  EXPECT_EQ(spec.tuning_key, "llama");
  ASSERT_TRUE(spec.workload);
  EXPECT_EQ(spec.workload->kind, "JobSet");
  EXPECT_EQ(spec.workload->api_version, "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(spec.workload->name, "llama");
  EXPECT_EQ(spec.mode, "Auto");
  EXPECT_EQ(spec.policy_name, "team-llm");
  EXPECT_EQ(spec.dataset, "c4");
  EXPECT_EQ(spec.dataset_kind, "raw-text");
  EXPECT_EQ(spec.min_workers, in.inputs->policy.min_workers);
  EXPECT_EQ(spec.max_workers, in.inputs->policy.max_workers);
  // No pods and no readable inputs: the key and the default mode only.
  ReconcileInput blind = InputFor({});
  blind.inputs.reset();
  EXPECT_EQ(SpecForNewGrainTuning(blind), (workload::GrainTuningSpec{.tuning_key = "llama", .mode = "Auto"}));
}

TEST(ReconcileStepsTest, AnOomKillIsRecordedOnceWithItsEvent) {
  std::vector<PodFacts> pods = {Pod(0, 4), Pod(1, 8, "Failed", /*oom=*/true), Pod(2, 0, "Failed", true)};
  std::map<int, Trial> trials = {{0, Measured(0, 4)}};
  std::vector<EventToRecord> events = RecordOomKills(PodsByAttempt(pods), trials);
  ASSERT_EQ(events.size(), 1u);  // attempt 2 runs no value graintune set
  EXPECT_EQ(events[0].reason, "CappedByOOM");
  EXPECT_EQ(events[0].type, "Warning");
  ASSERT_TRUE(trials.count(1));
  EXPECT_TRUE(trials[1].oom_killed);
  EXPECT_EQ(trials[1].workers, 8);
  EXPECT_FALSE(trials.count(2));
  EXPECT_FALSE(trials[0].oom_killed);
  // Already recorded: no second event.
  EXPECT_TRUE(RecordOomKills(PodsByAttempt(pods), trials).empty());
  // In a run that keeps its value, the event says the ways out.
  std::map<int, Trial> none;
  const std::vector<PodFacts> pinned_oom = {Pinned(Pod(0, 8, "Failed", true))};
  events = RecordOomKills(PodsByAttempt(pinned_oom), none);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "OOMKilledInPinnedRun");
  EXPECT_NE(events[0].note.find("grain_use_elastic_iterator=true"), std::string::npos);
}

TEST(ReconcileStepsTest, MeasuredTrialsNeedEnoughStepsAndNeverShrink) {
  std::vector<PodFacts> pods = {Pod(0, 4)};
  std::map<int, Trial> trials;
  MergeMeasuredTrials(InputFor(pods, {{0, DataBoundSteps(5)}}), PodsByAttempt(pods), trials);
  EXPECT_TRUE(trials.empty());  // fewer than min_samples steady steps
  MergeMeasuredTrials(InputFor(pods, {{0, DataBoundSteps(18)}}), PodsByAttempt(pods), trials);
  ASSERT_TRUE(trials.count(0));
  const int samples = trials[0].samples;
  EXPECT_TRUE(IsDataBound(trials[0]));
  // A shorter view (a restarted exporter) keeps the stored trial.
  MergeMeasuredTrials(InputFor(pods, {{0, DataBoundSteps(12)}}), PodsByAttempt(pods), trials);
  EXPECT_EQ(trials[0].samples, samples);
  // A longer view of steps that no longer show the drain keeps the data-bound verdict.
  telemetry::StepsDocument steady;
  for (int s = 1; s <= 80; ++s) steady.steps.push_back({s, s == 1 ? 30.0 : 7.4, 60, 3000});
  MergeMeasuredTrials(InputFor(pods, {{0, steady}}), PodsByAttempt(pods), trials);
  EXPECT_GT(trials[0].samples, samples);
  EXPECT_TRUE(IsDataBound(trials[0]));
  // An OOM-killed attempt is not measured.
  std::map<int, Trial> oom;
  std::vector<PodFacts> killed = {Pod(0, 4, "Failed", true)};
  MergeMeasuredTrials(InputFor(killed, {{0, DataBoundSteps(40)}}), PodsByAttempt(killed), oom);
  EXPECT_TRUE(oom.empty());
}

TEST(ReconcileStepsTest, RecordedTrialsEndTheAttemptsWithNoPodAlive) {
  GrainTuningStatus status;
  RecordTrials({}, {}, status);
  EXPECT_TRUE(status.trials.empty());
  EXPECT_FALSE(status.last_trial);
  RecordTrials({Measured(0, 4), Measured(1, 9)}, {Pod(0, 4, "Failed"), Pod(1, 9)}, status);
  ASSERT_EQ(status.trials.size(), 2u);
  EXPECT_EQ(status.last_trial, status.trials[1]);
  EXPECT_EQ(status.trials[0], workload::TrialStatusOf(Measured(0, 4)));
  EXPECT_EQ(status.ended_attempts, std::vector<int>({0}));
}

TEST(ReconcileStepsTest, APinnedRunIsRecordedAndItsNewestAttemptPinned) {
  GrainTuningStatus status;
  PodFacts stopped = Pinned(Pod(1, 4, "Succeeded"));
  stopped.steps = 40;
  stopped.last_step = 12;
  const RunsAndPins runs = RecordRunsAndPins({Pinned(Pod(0, 4, "Failed")), stopped}, status);
  ASSERT_EQ(status.runs.size(), 1u);
  EXPECT_EQ(status.runs[0].workers, 4);
  ASSERT_TRUE(runs.pinned);
  EXPECT_EQ(runs.pinned->attempt, 1);
  ASSERT_TRUE(runs.ended_early);
  EXPECT_EQ(status.ended_early, runs.ended_early);
  // Unpinned pods record nothing.
  GrainTuningStatus free;
  const RunsAndPins none = RecordRunsAndPins({Pod(0, 4)}, free);
  EXPECT_TRUE(free.runs.empty());
  EXPECT_FALSE(none.pinned);
  EXPECT_FALSE(free.ended_early);
}

// 2b. A lap's answer, once status.lap records it, is the attempt's: a pod seen waiting again
// gets it, even when its laps would now say otherwise (too late), and no new Event is told.
TEST(ReconcileStepsTest, ARecordedLapAnswerIsTheAttempts) {
  PodFacts waiting = Pod(0, 64);
  waiting.uid = "u0";
  waiting.admission_workers = 64;
  waiting.lap_answer_wait_seconds = 120;
  const std::vector<PodFacts> pods = {waiting};
  ReconcileInput in;
  in.inputs = SeedInputs();
  in.now = "2026-12-05T12:00:00Z";
  telemetry::LapReport late;
  late.result = contract::LapResult{.completed = true, .workers = 64};
  late.result_age_seconds = 500;
  in.laps["u0"] = late;
  workload::GrainTuningStatus status;
  std::vector<EventToRecord> events;
  std::optional<LapAnswerWrite> write = RecordLap(in, PodsByAttempt(pods), status, events);
  ASSERT_TRUE(write && status.lap);
  EXPECT_EQ(write->answer.rfind("none: the laps' answer came too late", 0), 0u) << write->answer;
  EXPECT_EQ(write->pods, std::vector<std::string>{"llama-0"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "LapGaveNoValue");
  EXPECT_EQ(status.lap->admission_workers, 64);
  EXPECT_FALSE(status.lap->workers.has_value());

  status.lap = workload::LapStatus{.attempt = 0, .answer = "7", .workers = 7};
  events.clear();
  write = RecordLap(in, PodsByAttempt(pods), status, events);
  ASSERT_TRUE(write);
  EXPECT_EQ(write->answer, "7");
  EXPECT_TRUE(events.empty());
  // Nothing waits: nothing to write.
  std::vector<PodFacts> answered = pods;
  answered[0].lap_answer = "7";
  EXPECT_FALSE(RecordLap(in, PodsByAttempt(answered), status, events).has_value());
}

// 2c'. The value each host of the lap's attempt started its trainer with: counted and recorded as
// hosts report it, and the first time two hosts report different values, one Warning naming them.
TEST(ReconcileStepsTest, TheHostsStartingValuesAreRecordedAndMixedValuesAreAWarning) {
  ReconcileInput in;
  workload::GrainTuningStatus status;
  std::vector<EventToRecord> events;
  const auto started = [](int workers) {
    telemetry::LapReport lap;
    lap.result = contract::LapResult{.completed = true, .workers = 64, .trainer_workers = workers,
                                     .trainer_value_why = "x"};
    return lap;
  };
  for (int i = 0; i < 3; ++i) {
    PodFacts p = Pod(0, 7);
    p.uid = "u" + std::to_string(i);
    in.pods.push_back(p);
  }
  PodFacts later = Pod(1, 7);
  later.uid = "later";
  in.pods.push_back(later);
  in.laps["u0"] = started(7);
  in.laps["later"] = started(64);  // attempt 1's: not the lap's
  RecordLapStarts(in, status, events);  // no lap: nothing
  EXPECT_FALSE(status.lap);

  status.lap = workload::LapStatus{.attempt = 0, .answer = "7", .workers = 7, .admission_workers = 64};
  RecordLapStarts(in, status, events);
  EXPECT_EQ(status.lap->started_hosts, 1);
  EXPECT_EQ(status.lap->started_values, std::vector<int>({7}));
  EXPECT_TRUE(events.empty());
  in.laps["u1"] = started(7);
  in.laps.erase("u0");  // a host not read this time still started: the count never goes down
  RecordLapStarts(in, status, events);
  EXPECT_EQ(status.lap->started_hosts, 1);
  in.laps["u0"] = started(7);
  RecordLapStarts(in, status, events);
  EXPECT_EQ(status.lap->started_hosts, 2);
  EXPECT_TRUE(events.empty());

  in.laps["u2"] = started(64);  // this host kept admission's value while its peers took the lap's
  RecordLapStarts(in, status, events);
  EXPECT_EQ(status.lap->started_hosts, 3);
  EXPECT_EQ(status.lap->started_values, std::vector<int>({7, 64}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "Warning");
  EXPECT_EQ(events[0].reason, "LapStartedMixedValues");
  EXPECT_NE(events[0].note.find("(7 on 2 hosts, 64 on 1 host)"), std::string::npos) << events[0].note;
  RecordLapStarts(in, status, events);  // told once
  EXPECT_EQ(events.size(), 1u);
}

// 2c. The trainer's compile after the laps: the first verdict a pod of the lap's attempt reports
// (through its steps or its lap), recorded once with one Event; another attempt's is not its.
TEST(ReconcileStepsTest, TheTrainersCompileIsRecordedOnceFromTheLapsAttempt) {
  ReconcileInput in;
  PodFacts p0 = Pod(0, 7), p1 = Pod(1, 7);
  p0.uid = "u0";
  p1.uid = "u1";
  in.pods = {p0, p1};
  workload::GrainTuningStatus status;
  std::vector<EventToRecord> events;
  RecordTrainerCompile(in, status, events);  // no lap: nothing
  EXPECT_FALSE(status.lap);

  status.lap = workload::LapStatus{.attempt = 0, .answer = "7", .workers = 7};
  telemetry::LapReport other;
  other.result = contract::LapResult{.completed = true,
                                      .trainer_compile = contract::TrainerCompileVerdict{contract::TrainerCompile::kCompiled}};
  in.laps["u1"] = other;  // attempt 1's, not the lap's
  RecordTrainerCompile(in, status, events);
  EXPECT_FALSE(status.lap->trainer_compile);
  EXPECT_TRUE(events.empty());

  telemetry::StepsDocument doc;
  doc.lap = telemetry::LapReport{};
  doc.lap->result = contract::LapResult{
      .completed = true, .trainer_compile = contract::TrainerCompileVerdict{contract::TrainerCompile::kCacheHit}};
  in.steps[0] = doc;
  RecordTrainerCompile(in, status, events);
  EXPECT_EQ(status.lap->trainer_compile, "CacheHit");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "LapTrainerCompile");
  // Recorded once: a later report changes nothing and tells nothing.
  in.steps[0].lap->result->trainer_compile = contract::TrainerCompileVerdict{contract::TrainerCompile::kCompiled};
  RecordTrainerCompile(in, status, events);
  EXPECT_EQ(status.lap->trainer_compile, "CacheHit");
  EXPECT_EQ(events.size(), 1u);

  // Unknown keeps its why.
  status.lap = workload::LapStatus{.attempt = 1, .answer = "7", .workers = 7};
  in.laps["u1"].result->trainer_compile =
      contract::TrainerCompileVerdict{contract::TrainerCompile::kUnknown, "the trainer wrote no step"};
  RecordTrainerCompile(in, status, events);
  EXPECT_EQ(status.lap->trainer_compile, "Unknown");
  EXPECT_EQ(status.lap->trainer_compile_why, "the trainer wrote no step");
}

TEST(ReconcileStepsTest, TheStartCheckOfTheNewestAttemptIsRecordedOnceWithAnEvent) {
  ReconcileInput in;
  PodFacts p0, p1;
  p0.uid = "u0";
  p0.name = "tiny-0";
  p1.uid = "u1";
  p1.name = "tiny-1";
  in.pods = {p0, p1};
  workload::GrainTuningStatus status;
  std::vector<EventToRecord> events;
  RecordStartCheck(in, status, events);  // no report: nothing
  EXPECT_FALSE(status.start_check);
  EXPECT_TRUE(events.empty());

  telemetry::StepsDocument doc;
  doc.pod_uid = "u0";
  doc.start_check = telemetry::StartCheckReport{
      .checked = true, .changed = true, .admission_value = 1, .written_value = 1, .started_value = 2,
      .why = "it resumes step 5, whose Grain iterator was saved with 2 workers (the start said 1)",
      .dataset_type = "grain",
      .checkpoint = telemetry::SavedIterator{.layout = "per-worker", .step = 5, .saved_workers = 2}};
  in.steps[0] = doc;
  RecordStartCheck(in, status, events);
  ASSERT_TRUE(status.start_check);
  EXPECT_EQ(*status.start_check, (workload::StartCheckStatus{.attempt = 0, .pod = "tiny-0", .checked = true,
                                                             .admission_workers = 1, .written_workers = 1,
                                                             .started_workers = 2, .saved_workers = 2,
                                                             .checkpoint_step = 5, .dataset_type = "grain",
                                                             .why = doc.start_check->why}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "Warning");
  EXPECT_EQ(events[0].reason, "StartCheckChangedValue");
  EXPECT_NE(events[0].note.find("graintune wrote 1 and MaxText read the start as 1; the trainer runs with 2"),
            std::string::npos) << events[0].note;
  // Recorded once per attempt.
  RecordStartCheck(in, status, events);
  EXPECT_EQ(events.size(), 1u);
  // A newer attempt's check replaces it; one that ran as written is a Normal event.
  doc.pod_uid = "u1";
  doc.start_check = telemetry::StartCheckReport{.checked = true, .admission_value = 2, .written_value = 2,
                                                .started_value = 2, .why = "2 workers as written"};
  in.steps[1] = doc;
  RecordStartCheck(in, status, events);
  EXPECT_EQ(status.start_check->attempt, 1);
  EXPECT_EQ(status.start_check->pod, "tiny-1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].reason, "StartCheck");
  EXPECT_EQ(events[1].type, "Normal");
  // A check that failed open says so.
  in.steps[2] = doc;
  in.steps[2].start_check = telemetry::StartCheckReport{.checked = false, .admission_value = 2,
                                                        .why = "MaxText's loader took longer than 120 s"};
  RecordStartCheck(in, status, events);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].reason, "StartCheckFailedOpen");
  EXPECT_FALSE(status.start_check->checked);
  // The status round-trips through its JSON.
  EXPECT_EQ(workload::StatusFromJson(workload::ToJson(status)).start_check, status.start_check);
}

TEST(ReconcileStepsTest, TheRecommendationIsForTheNextAttemptOnceTheNewestIsMeasured) {
  Decision d;
  d.workers = 9;
  d.per_worker_buffer = 2;
  d.reason = "decided";
  const std::vector<PodFacts> pods = {Pod(0, 4), Pod(1, 6)};
  const AttemptPods attempts = PodsByAttempt(pods);
  EXPECT_EQ(NewestAttempt(attempts, {}), 1);
  EXPECT_EQ(NewestAttempt({}, {Measured(3, 4)}), 3);
  EXPECT_EQ(NewestAttempt({}, {}), 0);
  // Measured: the decision, for attempt 2.
  EXPECT_EQ(Recommendation(std::nullopt, d, attempts, 1, true, std::nullopt, 9),
            (RecommendationStatus{.workers = 9, .per_worker_buffer = 2, .attempt = 2, .reason = "decided"}));
  // Measured and pinned: the run's value.
  const PinnedAttempt pinned{.attempt = 1, .checkpoint_dir = "gs://c", .run = {.workers = 4, .first_attempt = 0}};
  const std::optional<RecommendationStatus> kept = Recommendation(std::nullopt, d, attempts, 1, true, pinned, 9);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->workers, 4);
  EXPECT_EQ(kept->attempt, 2);
  EXPECT_EQ(kept->reason, PinnedRunReason("gs://c", 2, 4, 9));
  // Not measured yet: the admitted value, unless one is recommended already.
  EXPECT_EQ(Recommendation(std::nullopt, d, attempts, 1, false, std::nullopt, 0),
            (RecommendationStatus{.workers = 6, .attempt = 1, .reason = "the value attempt 1 was admitted with"}));
  const RecommendationStatus old{.workers = 5, .attempt = 1, .reason = "earlier"};
  EXPECT_EQ(Recommendation(old, d, attempts, 1, false, std::nullopt, 0), old);
  EXPECT_FALSE(Recommendation(std::nullopt, d, {}, 0, false, std::nullopt, 0));
}

TEST(ReconcileStepsTest, ALapsAnswerReplacesTheAdmittedValueOfItsAttempt) {
  Decision d;
  d.workers = 9;
  std::vector<PodFacts> pods = {Pod(0, 64)};
  pods[0].lap_answer_wait_seconds = 120;
  pods[0].admission_workers = 64;
  const RecommendationStatus admitted{.workers = 64, .attempt = 0, .reason = "the value attempt 0 was admitted with"};
  // No answer yet: admission's value stands.
  EXPECT_EQ(Recommendation(admitted, d, PodsByAttempt(pods), 0, false, std::nullopt, 0), admitted);
  // A lap that gave no value leaves admission's.
  pods[0].lap_answer = "none: the lap of p killed by signal 9";
  EXPECT_EQ(Recommendation(admitted, d, PodsByAttempt(pods), 0, false, std::nullopt, 0), admitted);
  // The lap answered 6 (PodFactsFromJson: the pod's value is then its answer).
  pods[0].lap_answer = "6";
  pods[0].workers = 6;
  EXPECT_EQ(Recommendation(admitted, d, PodsByAttempt(pods), 0, false, std::nullopt, 0),
            (RecommendationStatus{.workers = 6, .attempt = 0,
                                  .reason = "the value attempt 0's practice lap gave (admitted with 64)"}));
  // A recommendation for another attempt is not the lap's to change.
  const RecommendationStatus later{.workers = 5, .attempt = 1, .reason = "earlier"};
  EXPECT_EQ(Recommendation(later, d, PodsByAttempt(pods), 0, false, std::nullopt, 0), later);
}

TEST(ReconcileStepsTest, DecidedAtMovesOnlyWhenTheRecommendationDoes) {
  const RecommendationStatus old{.workers = 5, .attempt = 1, .reason = "r", .decided_at = "2026-11-01T00:00:00Z"};
  std::optional<RecommendationStatus> same = old;
  StampDecidedAt(same, old, kNow);
  EXPECT_EQ(same->decided_at, "2026-11-01T00:00:00Z");
  std::optional<RecommendationStatus> moved = RecommendationStatus{.workers = 6, .attempt = 1, .reason = "r"};
  StampDecidedAt(moved, old, kNow);
  EXPECT_EQ(moved->decided_at, kNow);
  std::optional<RecommendationStatus> none;
  StampDecidedAt(none, old, kNow);
  EXPECT_FALSE(none);
}

TEST(ReconcileStepsTest, TheNextRunIsDecidedForAWholeRunWhenRunsKeepTheirValue) {
  const TuningInputs inputs = SeedInputs();
  Trial starved = Measured(0, 4, 30);
  starved.step_seconds_p50 = starved.step_seconds_mean = 7.4;
  starved.step_spread = 0.5;
  const std::vector<Trial> trials = {starved};
  const Decision d = Decide(inputs, trials);
  EXPECT_EQ(NextRun(inputs, trials, {Pod(0, 4)}, d), (workload::NextRunStatus{.workers = d.workers, .reason = d.reason}));
  TuningInputs whole_run = inputs;
  whole_run.lifetime = ValueLifetime::kRun;
  const Decision run = Decide(whole_run, trials);
  EXPECT_EQ(NextRun(inputs, trials, {Pinned(Pod(0, 4))}, d),
            (workload::NextRunStatus{.workers = run.workers, .reason = run.reason}));
}

TEST(ReconcileStepsTest, LearnedFiguresAreWholeAndKeptWhenNothingIsLearned) {
  TuningInputs inputs = SeedInputs();
  inputs.demand.transfer_key = "llama3-8b/b4/v6e";
  GrainTuningStatus status;
  status.learned = workload::LearnedStatus{.machine_type = "old", .tokens_per_second_per_worker = 1};
  Learn({}, inputs, status);
  EXPECT_EQ(status.learned->machine_type, "old");  // nothing learned: the stored figures stay
  EXPECT_FALSE(status.learned_tokens_per_second_per_worker);

  std::vector<PodFacts> pods = {Pod(0, 4)};
  std::map<int, Trial> trials;
  MergeMeasuredTrials(InputFor(pods, {{0, DataBoundSteps(18)}}), PodsByAttempt(pods), trials);
  ASSERT_TRUE(trials.count(0));
  Learn({trials[0]}, inputs, status);
  ASSERT_TRUE(status.learned_tokens_per_second_per_worker);
  EXPECT_EQ(*status.learned_tokens_per_second_per_worker, std::round(*status.learned_tokens_per_second_per_worker));
  EXPECT_EQ(status.learned->tokens_per_second_per_worker, status.learned_tokens_per_second_per_worker);
  EXPECT_EQ(status.learned->machine_type, inputs.host.machine_type);
  EXPECT_FALSE(status.learned->rate_basis.value_or("").empty());
}

TEST(ReconcileStepsTest, AConditionKeepsItsTransitionTimeWhileItsStatusStays) {
  const std::vector<ConditionStatus> old = {
      {.type = "Converged", .status = "False", .last_transition_time = "2026-11-01T00:00:00Z"},
      {.type = "CappedByOOM", .status = "False", .last_transition_time = "2026-11-01T00:00:00Z"}};
  const std::vector<ConditionStatus> now =
      Conditions({.phase = "Exploring", .capped = true, .trials = 2, .pinned = "kept"}, old, kNow);
  ASSERT_EQ(now.size(), 5u);
  EXPECT_EQ(now[0].type, "Converged");
  EXPECT_EQ(now[0].status, "False");
  EXPECT_EQ(now[0].last_transition_time, "2026-11-01T00:00:00Z");
  EXPECT_EQ(now[1].type, "CappedByOOM");
  EXPECT_EQ(now[1].status, "True");
  EXPECT_EQ(now[1].last_transition_time, kNow);
  EXPECT_EQ(now[2].message, "2 trial(s) recorded");
  EXPECT_EQ(now[3].type, "ValuePinned");
  EXPECT_EQ(now[3].message, "kept");
  EXPECT_EQ(now[4].type, "EndedEarly");
  EXPECT_EQ(now[4].status, "False");
}

TEST(ReconcileStepsTest, EventsTellWhatChangedOnce) {
  GrainTuningStatus old;
  old.phase = "Exploring";
  old.recommendation = RecommendationStatus{.workers = 4, .attempt = 1};
  GrainTuningStatus status = old;
  status.phase = "Converged";
  status.recommendation = RecommendationStatus{.workers = 9, .attempt = 2, .reason = "why"};
  RunsAndPins runs;
  runs.pinned = PinnedAttempt{.attempt = 2, .checkpoint_dir = "gs://c", .run = {.workers = 4, .first_attempt = 0}};
  std::vector<EventToRecord> events = StatusEvents(old, runs, 9, status);
  std::vector<std::string> reasons;
  for (const EventToRecord& e : events) reasons.push_back(e.reason);
  EXPECT_EQ(reasons, std::vector<std::string>({"RecommendationChanged", "ValuePinned", "Converged"}));
  EXPECT_EQ(events[0].note, "4 -> 9 Grain workers for attempt 2: why");
  EXPECT_EQ(status.pinned_attempt, 2);
  // Told once: the same status again tells nothing.
  GrainTuningStatus again = status;
  EXPECT_TRUE(StatusEvents(status, runs, 9, again).empty());
  // An attempt that ended early, newly.
  runs.ended_early = EndedEarly{.attempt = 2, .pod = "p", .last_step = 3, .steps = 40};
  again.ended_early = runs.ended_early;
  events = StatusEvents(status, runs, 9, again);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "EndedEarly");
  EXPECT_EQ(events[0].note, EndedEarlyMessage(*runs.ended_early));
}

}  // namespace
}  // namespace graintune::op
