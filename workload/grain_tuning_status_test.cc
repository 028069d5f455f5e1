#include "workload/grain_tuning_status.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <vector>

#include "workload/graintune_objects.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

// A value for every field a CRD schema declares, nested objects and one-entry lists included,
// each within the field's bounds: what a round trip must give back whole.
json SampleOf(const YAML::Node& schema) {
  const std::string type = schema["type"] ? schema["type"].as<std::string>() : "";
  if (type == "object") {
    json object = json::object();
    if (schema["properties"])
      for (const auto& property : schema["properties"])
        object[property.first.as<std::string>()] = SampleOf(property.second);
    return object;
  }
  if (type == "array") return json::array({SampleOf(schema["items"])});
  if (type == "integer") return schema["minimum"] ? schema["minimum"].as<int>() + 2 : 7;
  if (type == "number") return schema["maximum"] ? schema["maximum"].as<double>() / 4 : 12.5;
  if (type == "boolean") return true;
  if (schema["enum"]) return schema["enum"][0].as<std::string>();
  if (schema["format"] && schema["format"].as<std::string>() == "date-time") return "2026-11-30T06:00:00Z";
  return "text of " + (schema["description"] ? schema["description"].as<std::string>().substr(0, 12) : type);
}

// Every leaf of a JSON value as a JSON pointer, to name what a round trip lost.
void Leaves(const json& value, const std::string& at, std::vector<std::string>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, item] : value.items()) Leaves(item, at + "/" + key, out);
  } else if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i) Leaves(value[i], at + "/" + std::to_string(i), out);
  } else {
    out.push_back(at);
  }
}
std::vector<std::string> Leaves(const json& value) {
  std::vector<std::string> out;
  Leaves(value, "", out);
  return out;
}

YAML::Node GrainTuningSchema() {
  const YAML::Node crd = YAML::LoadFile(std::string(GRAINTUNE_CRDS_DIR) + "/graintune.dev_graintunings.yaml");
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
}

TEST(GrainTuningStatusTest, EveryStatusFieldTheCrdDeclaresRoundTrips) {
  const json status = SampleOf(GrainTuningSchema()["status"]);
  ASSERT_GT(Leaves(status).size(), 60u) << status.dump();  // the schema was read
  const json back = ToJson(StatusFromJson(status));
  EXPECT_EQ(Leaves(back), Leaves(status)) << "a status field the CRD declares is not in GrainTuningStatus";
  EXPECT_EQ(back, status);
}

TEST(GrainTuningStatusTest, EverySpecFieldTheCrdDeclaresRoundTrips) {
  const json spec = SampleOf(GrainTuningSchema()["spec"]);
  ASSERT_GT(Leaves(spec).size(), 10u) << spec.dump();
  const json back = ToJson(SpecFromJson(spec));
  EXPECT_EQ(Leaves(back), Leaves(spec)) << "a spec field the CRD declares is not in GrainTuningSpec";
  EXPECT_EQ(back, spec);
}

TEST(GrainTuningStatusTest, WhatTheStructWritesTheCrdDeclares) {
  // A status with every field set, written: each key must be one the CRD declares, or the API
  // server would drop it silently.
  GrainTuningStatus s;
  s.phase = "Converged";
  s.observed_generation = 3;
  s.recommendation = RecommendationStatus{.workers = 9, .per_worker_buffer = 2, .attempt = 3, .reason = "r", .decided_at = "t"};
  Trial measured;
  measured.attempt = 1;
  measured.workers = 4;
  measured.samples = 20;
  TrialStatus trial = TrialStatusOf(measured);
  trial.buffered_step_seconds = trial.tflops_per_device = trial.worker_busy_fraction = trial.worker_memory_bytes =
      trial.trainer_memory_bytes = trial.trainer_cpu_cores = 1.0;
  trial.start_time = trial.end_time = "t";
  s.trials = {trial};
  s.last_trial = trial;
  s.ended_attempts = {1};
  s.learned_tokens_per_second_per_worker = 5;
  s.runs = {RunStatus{.checkpoint_dir = "/c", .workers = 4, .first_attempt = 0}};
  s.learned = LearnedStatus{.machine_type = "m", .tokens_per_second_per_worker = 1, .rate_basis = "b",
                            .worker_memory_bytes = 1, .fed_tokens_per_second_per_host = 1, .demand_key = "k"};
  s.next_run = NextRunStatus{.workers = 9, .reason = "r"};
  s.pinned_attempt = 2;
  s.ended_early = EndedEarlyStatus{.attempt = 1, .pod = "p", .last_step = 3, .steps = 9};
  s.conditions = {ConditionStatus{.type = "Converged", .status = "True", .observed_generation = 3,
                                  .last_transition_time = "t", .reason = "R", .message = "m"}};
  const std::vector<std::string> declared = Leaves(SampleOf(GrainTuningSchema()["status"]));
  for (const std::string& leaf : Leaves(ToJson(s)))
    EXPECT_NE(std::find(declared.begin(), declared.end(), leaf), declared.end()) << leaf << " is not in the CRD";
  EXPECT_EQ(StatusFromJson(ToJson(s)), s);
}

TEST(GrainTuningStatusTest, MalformedFieldsReadAsAbsentAndNeverThrow) {
  const json status = json::parse(R"({
    "phase": 3, "observedGeneration": "one", "pinnedAttempt": 1e30,
    "recommendation": [], "nextRun": {"workers": "many", "reason": "why"},
    "trials": [5, {"attempt": "x", "workers": 4}, {"attempt": 2, "workers": 4.5, "samples": 9}],
    "runs": {"checkpointDir": "/c"}, "endedAttempts": ["y", 4, 5000000000],
    "conditions": [{"status": "True"}, {"type": "Converged", "status": true}],
    "learned": {"machineType": 7, "demandKey": "k"}, "unknownField": {"deep": [1]}})");
  GrainTuningStatus s;
  ASSERT_NO_THROW(s = StatusFromJson(status));
  EXPECT_FALSE(s.phase);
  EXPECT_FALSE(s.observed_generation);
  EXPECT_FALSE(s.pinned_attempt);
  EXPECT_FALSE(s.recommendation);
  ASSERT_TRUE(s.next_run);
  EXPECT_FALSE(s.next_run->workers);
  EXPECT_EQ(s.next_run->reason, "why");
  ASSERT_EQ(s.trials.size(), 1u);  // a trial without a readable attempt is skipped
  EXPECT_EQ(s.trials[0].attempt, 2);
  EXPECT_EQ(s.trials[0].workers, 0);
  EXPECT_EQ(s.trials[0].samples, 9);
  EXPECT_TRUE(s.runs.empty());
  EXPECT_EQ(s.ended_attempts, std::vector<int>({4}));
  ASSERT_EQ(s.conditions.size(), 1u);  // a condition without a type is skipped
  EXPECT_EQ(s.conditions[0].status, "");
  ASSERT_TRUE(s.learned);
  EXPECT_FALSE(s.learned->machine_type);
  EXPECT_EQ(s.learned->demand_key, "k");
  // Not an object at all: an empty status.
  EXPECT_EQ(StatusFromJson(json("text")), GrainTuningStatus{});
  EXPECT_EQ(StatusOf(json::array()), GrainTuningStatus{});
  EXPECT_EQ(SpecOf(json{{"spec", 5}}), GrainTuningSpec{});
}

TEST(GrainTuningStatusTest, ListsAreBounded) {
  json trials = json::array();
  for (int a = 0; a < 10000; ++a) trials.push_back({{"attempt", a}, {"workers", 1}});
  const GrainTuningStatus s = StatusFromJson({{"trials", trials}});
  ASSERT_EQ(s.trials.size(), kMaxStatusListEntries);
  EXPECT_EQ(s.trials.back().attempt, static_cast<int>(kMaxStatusListEntries) - 1);
}

TEST(GrainTuningStatusTest, PartialReadsLeaveTheLargeListsOut) {
  const json gt = {{"status", {{"trials", {{{"attempt", 0}, {"workers", 4}}}},
                               {"lastTrial", {{"attempt", 0}, {"workers", 4}}},
                               {"runs", {{{"checkpointDir", "/c"}, {"workers", 4}}}},
                               {"learnedTokensPerSecondPerWorker", 2000}}}};
  const GrainTuningStatus without_trials = StatusWithoutTrialsOf(gt);
  EXPECT_TRUE(without_trials.trials.empty());
  EXPECT_FALSE(without_trials.last_trial);
  EXPECT_EQ(without_trials.runs.size(), 1u);
  const GrainTuningStatus without_lists = StatusWithoutListsOf(gt);
  EXPECT_TRUE(without_lists.runs.empty());
  EXPECT_EQ(without_lists.learned_tokens_per_second_per_worker, 2000);
}

TEST(GrainTuningStatusTest, ATrialIsStoredRoundedAndReadBackWithItsVerdict) {
  Trial t;
  t.attempt = 2;
  t.workers = 4;
  t.samples = 20;
  t.step_seconds_p50 = 7.40049;
  t.step_seconds_mean = 7.5;
  t.tokens_per_second_per_host = 8856.6;
  t.tflops_per_device = 58.04;
  t.stall_fraction = 1.7;  // clamped
  t.step_spread = 0.5;     // data-bound
  const TrialStatus stored = TrialStatusOf(t);
  EXPECT_EQ(stored.step_time_p50_seconds, 7.4);
  EXPECT_EQ(stored.tokens_per_second, 8857);
  EXPECT_EQ(stored.tflops_per_device, 58.0);
  EXPECT_EQ(stored.stall_fraction, 1.0);
  EXPECT_EQ(stored.data_bound, true);
  EXPECT_FALSE(stored.worker_busy_fraction);  // not measured (-1)
  EXPECT_EQ(ToJson(stored), TrialToJson(t));
  const Trial back = TrialOf(stored);
  EXPECT_TRUE(IsDataBound(back));
  EXPECT_EQ(back.worker_busy_fraction, -1);
  EXPECT_EQ(back.samples, 20);
  // A stored trial without a mean reads its median as the mean.
  TrialStatus no_mean = stored;
  no_mean.step_time_mean_seconds.reset();
  EXPECT_EQ(TrialOf(no_mean).step_seconds_mean, 7.4);
}

TEST(GrainTuningStatusTest, RenewedTimestampsAreNotAChange) {
  GrainTuningStatus a;
  a.recommendation = RecommendationStatus{.workers = 4, .decided_at = "2026-11-30T06:00:00Z"};
  a.conditions = {ConditionStatus{.type = "Converged", .status = "False", .last_transition_time = "t1"}};
  GrainTuningStatus b = a;
  b.recommendation->decided_at = "2026-11-30T07:00:00Z";
  b.conditions[0].last_transition_time = "t2";
  EXPECT_TRUE(StatusEquivalent(a, b));
  EXPECT_FALSE(ProgressOnly(a, b));  // nothing to write at all
  b.conditions[0].status = "True";
  EXPECT_FALSE(StatusEquivalent(a, b));
  EXPECT_FALSE(ProgressOnly(a, b));  // a condition that turns is news
}

TEST(GrainTuningStatusTest, RunRecordsSkipEntriesWithoutADirectoryOrAValue) {
  const std::map<std::string, RunRecord> runs = RunRecordsOf(
      {{.checkpoint_dir = "/a", .workers = 4}, {.checkpoint_dir = "", .workers = 4},
       {.checkpoint_dir = "/b", .workers = 0}, {.checkpoint_dir = "/a", .workers = 9, .first_attempt = 3}});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.at("/a").workers, 4);  // the first entry for a directory counts
  EXPECT_EQ(runs.at("/a").first_attempt, 0);
  EXPECT_EQ(RunStatusOf("/a", runs.at("/a")), (RunStatus{.checkpoint_dir = "/a", .workers = 4, .first_attempt = 0}));
}

TEST(GrainTuningStatusTest, ANewGrainTuningIsNamedForItsKey) {
  const json gt = NewGrainTuning("team-a", GrainTuningSpec{.tuning_key = "Llama 3", .mode = "Auto"});
  EXPECT_EQ(gt["metadata"]["name"], GrainTuningName("Llama 3"));
  EXPECT_EQ(gt["metadata"]["namespace"], "team-a");
  EXPECT_EQ(gt["metadata"]["labels"]["graintune.dev/tuning-key-hash"], GrainTuningName("Llama 3"));
  EXPECT_EQ(SpecOf(gt).tuning_key, "Llama 3");
  EXPECT_EQ(SpecOf(gt).mode, "Auto");
}

}  // namespace
}  // namespace graintune::workload
