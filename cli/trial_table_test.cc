#include "cli/trial_table.h"

#include <gtest/gtest.h>

namespace graintune::cli {
namespace {

Trial Measured(int attempt, int workers, double step, double tflops, bool data_bound = false) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.samples = 12;
  t.step_seconds_mean = step;
  t.tflops_per_device = tflops;
  if (data_bound) t.draining = true;
  return t;
}

TEST(TrialRows, VerdictsCompareWithTheFastestAndTheFewestWorkersAtItsSpeed) {
  Trial oom;
  oom.attempt = 3;
  oom.workers = 64;
  oom.oom_killed = true;
  Trial early;
  early.attempt = 4;
  early.workers = 12;  // running, no steady steps yet
  const std::vector<TrialRow> rows = TrialRows(
      {Measured(0, 4, 6.885, 144.1, true), Measured(1, 15, 4.299, 195.1), Measured(2, 10, 4.31, 194.6),
       oom, early},
      0.03);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].verdict, "60% slower than attempt 1");
  EXPECT_EQ(rows[1].verdict, "as fast as attempt 2, more workers");
  EXPECT_EQ(rows[2].verdict, "best so far");
  EXPECT_EQ(rows[3].verdict, "OOM-killed");
  EXPECT_EQ(rows[4].verdict, "no steady steps");
  EXPECT_EQ(rows[0].data_bound, std::optional<bool>(true));
  EXPECT_EQ(rows[1].data_bound, std::optional<bool>(false));
  EXPECT_FALSE(rows[3].step_seconds.has_value());
  EXPECT_FALSE(rows[4].data_bound.has_value());
  // Beyond the noise tolerance the fewer workers lose.
  EXPECT_EQ(TrialRows({Measured(1, 15, 4.299, 195.1), Measured(2, 10, 4.31, 194.6)}, 0.001)[1].verdict,
            "0.3% slower than attempt 1");
}

TEST(TrialTable, AlignedColumnsWithDashesForTheUnknown) {
  const std::vector<TrialRow> rows = {
      {.attempt = 0, .workers = 4, .step_seconds = 6.885, .tflops_per_device = 144.1, .data_bound = true,
       .verdict = "60% slower than attempt 1"},
      {.attempt = 1, .workers = 64, .verdict = "OOM-killed"},
      {.attempt = 12, .workers = 15, .step_seconds = 4.299, .data_bound = false, .verdict = "best so far"}};
  EXPECT_EQ(TrialTable(rows),
            "ATTEMPT   WORKERS   STEP     TFLOP/S   DATA-BOUND   VERDICT\n"
            "0         4         6.885s   144.1     yes          60% slower than attempt 1\n"
            "1         64        -        -         -            OOM-killed\n"
            "12        15        4.299s   -         no           best so far\n");
  EXPECT_EQ(TrialRowJson(rows[1]),
            nlohmann::json::parse(R"({"attempt": 1, "workers": 64, "stepSeconds": null,
                                      "tflopsPerDevice": null, "dataBound": null, "verdict": "OOM-killed"})"));
}

TEST(TuningStatus, HeadingRecommendationAndTrialsOfAGrainTuning) {
  const nlohmann::json gt = nlohmann::json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "llama"},
    "spec": {"tuningKey": "llama-runs"},
    "status": {"phase": "Exploring",
               "recommendation": {"workers": 15, "attempt": 1, "reason": "data-bound at 4"},
               "trials": [{"attempt": 0, "workers": 4, "samples": 12, "stepTimeMeanSeconds": 6.885,
                           "tflopsPerDevice": 144.1, "dataBound": true}]}})");
  EXPECT_EQ(TuningStatusText(gt),
            "GrainTuning team-a/llama (key llama-runs): Exploring\n"
            "  next: attempt 1 gets 15 workers\n"
            "  why:  data-bound at 4\n"
            "\n"
            "ATTEMPT   WORKERS   STEP     TFLOP/S   DATA-BOUND   VERDICT\n"
            "0         4         6.885s   144.1     yes          best so far\n");
  const nlohmann::json j = TuningStatusJson(gt);
  EXPECT_EQ(j["recommendation"]["workers"], 15);
  EXPECT_EQ(j["trials"][0]["dataBound"], true);
  EXPECT_EQ(TuningStatusText({{"metadata", {{"namespace", "a"}, {"name", "b"}}}, {"spec", {{"tuningKey", "b"}}}}),
            "GrainTuning a/b\n  no trials yet\n");
}

TEST(TuningStatus, APinnedRunSaysItKeepsItsValueAndWhatTheNextRunGets) {
  const nlohmann::json gt = nlohmann::json::parse(R"({
    "metadata": {"namespace": "ml", "name": "pretrain"},
    "spec": {"tuningKey": "pretrain"},
    "status": {"phase": "Exploring",
               "recommendation": {"workers": 4, "attempt": 2, "reason": "kept"},
               "nextRun": {"workers": 9, "reason": "measured"},
               "runs": [{"checkpointDir": "gs://b/pretrain/checkpoints", "workers": 4, "firstAttempt": 0}],
               "conditions": [{"type": "ValuePinned", "status": "True", "reason": "GrainIteratorCheckpoint",
                               "message": "attempt 2 keeps 4 workers"},
                              {"type": "EndedEarly", "status": "False", "reason": "NoneEndedEarly", "message": "none"}]}})");
  const std::string text = TuningStatusText(gt);
  EXPECT_NE(text.find("  next run: 9 workers\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  run:  gs://b/pretrain/checkpoints keeps 4 workers (from attempt 0)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  pinned: attempt 2 keeps 4 workers\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("ENDED EARLY"), std::string::npos) << "a False condition is not shown";
  const nlohmann::json j = TuningStatusJson(gt);
  EXPECT_EQ(j["nextRun"]["workers"], 9);
  EXPECT_EQ(j["runs"][0]["workers"], 4);
  EXPECT_EQ(j["conditions"], (nlohmann::json{{"ValuePinned", "attempt 2 keeps 4 workers"}}));
}

// What the start check saw at the trainer's start: what each side read and what the trainer runs.
TEST(TuningStatus, TheStartCheckSaysWhatTheTrainerRunsWithAndWhy) {
  nlohmann::json gt = nlohmann::json::parse(R"({
    "metadata": {"namespace": "ml", "name": "tiny"}, "spec": {"tuningKey": "tiny"},
    "status": {"startCheck": {"attempt": 1, "pod": "tiny-w-0-0", "checked": true, "admissionWorkers": 2,
                              "writtenWorkers": 2, "startedWorkers": 1, "savedWorkers": 1, "checkpointStep": 10,
                              "datasetType": "grain", "why": "it resumes step 10, whose Grain iterator was saved with 1 workers"}}})");
  const std::string text = TuningStatusText(gt);
  EXPECT_NE(text.find("  start check: attempt 1 (pod tiny-w-0-0): graintune wrote 2, MaxText read 2, the trainer runs "
                      "with 1, its checkpoint (step 10) saved 1\n    why: it resumes step 10"),
            std::string::npos) << text;
  EXPECT_EQ(TuningStatusJson(gt)["startCheck"]["startedWorkers"], 1);
  gt["status"]["startCheck"] = {{"attempt", 0}, {"pod", "p"}, {"checked", false}, {"why", "no MaxText"}};
  EXPECT_NE(TuningStatusText(gt).find("could not read the start, which ran as written (no MaxText)"), std::string::npos)
      << TuningStatusText(gt);
}

// A run sized by its practice lap says so: the laps, the value they gave, or why none.
TEST(TuningStatus, APracticeLapSaysWhatItGaveTheRun) {
  nlohmann::json gt = nlohmann::json::parse(R"({
    "metadata": {"namespace": "ml", "name": "pretrain"}, "spec": {"tuningKey": "pretrain"},
    "status": {"lap": {"attempt": 0, "answer": "7", "workers": 7, "admissionWorkers": 64, "hosts": 8,
                       "wallSeconds": 1153.4, "stepSeconds": 4.3}}})");
  EXPECT_NE(TuningStatusText(gt).find("  lap:  attempt 0, 8 hosts at 64 workers: the run keeps 7 workers (1153 s)\n"),
            std::string::npos) << TuningStatusText(gt);
  EXPECT_EQ(TuningStatusJson(gt)["lap"]["workers"], 7);
  EXPECT_EQ(TuningStatusText(gt).find("started their trainers"), std::string::npos);  // none reported yet
  gt["status"]["lap"]["startedHosts"] = 8;
  gt["status"]["lap"]["startedValues"] = {7};
  EXPECT_NE(TuningStatusText(gt).find("  lap:  8 hosts started their trainers with 7 workers\n"), std::string::npos)
      << TuningStatusText(gt);
  gt["status"]["lap"]["startedValues"] = {7, 64};
  EXPECT_NE(TuningStatusText(gt).find("  lap:  8 hosts started their trainers with MIXED values: 7, 64 "),
            std::string::npos) << TuningStatusText(gt);
  gt["status"]["lap"]["trainerCompile"] = "CacheHit";
  EXPECT_NE(TuningStatusText(gt).find("  lap:  the trainer's train step: from the JAX cache the lap filled\n"),
            std::string::npos) << TuningStatusText(gt);
  gt["status"]["lap"]["trainerCompile"] = "Unknown";
  gt["status"]["lap"]["trainerCompileWhy"] = "the trainer wrote no step";
  EXPECT_NE(TuningStatusText(gt).find("  lap:  the trainer's train step: unknown (the trainer wrote no step)\n"),
            std::string::npos) << TuningStatusText(gt);
  gt["status"]["lap"] = {{"attempt", 0}, {"answer", "none: the lap of p-0 exited 1"}, {"admissionWorkers", 64}, {"hosts", 0}};
  EXPECT_NE(TuningStatusText(gt).find("  lap:  attempt 0, 0 hosts at 64 workers: none: the lap of p-0 exited 1\n"),
            std::string::npos) << TuningStatusText(gt);
}

// What its first pick learned from other workloads: the demand key, the GrainTunings named.
TEST(TuningStatus, TheDemandKeyAndTheGrainTuningsItsFirstPickLearnedFrom) {
  nlohmann::json gt = nlohmann::json::parse(R"({
    "metadata": {"namespace": "team-b", "name": "llama"},
    "spec": {"tuningKey": "llama", "demandKey": "llama3-8b batch 2, settings 00ff",
             "learnedFrom": ["team-a/llama-a", "team-a/c4"]},
    "status": {"phase": "Exploring"}})");
  std::string text = TuningStatusText(gt);
  EXPECT_NE(text.find("  demand key: llama3-8b batch 2, settings 00ff\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  learned from: GrainTuning team-a/llama-a, team-a/c4\n"), std::string::npos) << text;
  nlohmann::json j = TuningStatusJson(gt);
  EXPECT_EQ(j["demandKey"], "llama3-8b batch 2, settings 00ff");
  EXPECT_EQ(j["learnedFrom"], nlohmann::json::array({"team-a/llama-a", "team-a/c4"}));

  // Created before the operator recorded a key: the key its measured demand is shared under.
  gt["spec"].erase("demandKey");
  gt["spec"].erase("learnedFrom");
  gt["status"]["learned"] = {{"demandKey", "llama3-8b batch 2, settings 00ff"}};
  text = TuningStatusText(gt);
  EXPECT_NE(text.find("  learned from: nothing learned elsewhere\n"), std::string::npos) << text;
  j = TuningStatusJson(gt);
  EXPECT_EQ(j["demandKey"], "llama3-8b batch 2, settings 00ff");
  EXPECT_EQ(j["learnedFrom"], nlohmann::json::array());
}

}  // namespace
}  // namespace graintune::cli
