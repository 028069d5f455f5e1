// The trainer's reports as they travel: MaxText's metrics lines, the exporter's /steps document
// (written by StepLog, read by ParseStepsDocument) and its bounds.
#include <gtest/gtest.h>

#include "telemetry/maxtext_metrics.h"
#include "telemetry/step_log.h"

namespace graintune::telemetry {
namespace {

// The step sample of a line, or a sample with step -1 when the line is no step or an error.
StepSample SampleOf(std::string_view line) {
  Result<MetricsLine> r = ParseMetricsLine(line);
  return r.ok() && r->sample ? *r->sample : StepSample{-1, -1};
}

TEST(MaxTextMetricsTest, ReadsTheFieldsGraintuneUses) {
  Result<MetricsLine> r = ParseMetricsLine(
      R"({"learning/loss": 2.3, "perf/step_time_seconds": 4.3, "perf/per_device_tflops_per_sec": 195.2,)"
      R"( "perf/per_device_tokens_per_sec": 7620.0, "step": 41.0, "run_name": "tiny"})");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(r->sample.has_value());
  const StepSample& s = *r->sample;
  EXPECT_EQ(s.step, 41);
  EXPECT_DOUBLE_EQ(s.step_time_seconds, 4.3);
  EXPECT_DOUBLE_EQ(s.tflops_per_device, 195.2);
  EXPECT_DOUBLE_EQ(s.tokens_per_device_per_second, 7620.0);
  EXPECT_EQ(r->run_name, "tiny");
  const StepSample bare = SampleOf(R"({"perf/step_time_seconds": 1, "step": 0})");
  EXPECT_EQ(bare.step, 0);
  EXPECT_EQ(bare.tflops_per_device, -1);
}

// Python's json.dumps writes a diverged loss as NaN or Infinity: the step still counts.
TEST(MaxTextMetricsTest, ReadsPythonsNonFiniteWords) {
  const StepSample s = SampleOf(
      R"({"learning/loss": NaN, "learning/grad_norm": Infinity, "learning/x": -Infinity,)"
      R"( "perf/step_time_seconds": 0.5, "perf/per_device_tflops_per_sec": NaN, "step": 7.0,)"
      R"( "run_name": "NaN Infinity \" NaN"})");
  EXPECT_EQ(s.step, 7);
  EXPECT_DOUBLE_EQ(s.step_time_seconds, 0.5);
  EXPECT_EQ(s.tflops_per_device, -1);  // not finite: absent
  Result<MetricsLine> named = ParseMetricsLine(
      R"({"perf/step_time_seconds": 1, "step": 1, "run_name": "NaN Infinity \" NaN"})");
  ASSERT_TRUE(named.ok()) << named.error();
  EXPECT_EQ(named->run_name, "NaN Infinity \" NaN");  // words inside strings stay
  // A step time that is not finite cannot be used.
  EXPECT_FALSE(ParseMetricsLine(R"({"perf/step_time_seconds": NaN, "step": 2})").ok());
  EXPECT_FALSE(ParseMetricsLine(R"({"perf/step_time_seconds": Infinity, "step": 2})").ok());
  EXPECT_FALSE(ParseMetricsLine(R"({"perf/step_time_seconds": 1, "step": NaN})").ok());
  EXPECT_FALSE(ParseMetricsLine(R"({"perf/step_time_seconds": 1, "step": 2, "x": NaNx})").ok());
}

// Eval metrics share the file: a line, but not a training step, and not malformed.
TEST(MaxTextMetricsTest, AnEvalLineIsNoStep) {
  Result<MetricsLine> r = ParseMetricsLine(
      R"({"eval/avg_loss": 7.9, "eval/total_weights": 2040.0, "step": 9.0, "run_name": "tiny"})");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->sample.has_value());
}

TEST(MaxTextMetricsTest, RefusesWhatItCannotUse) {
  for (const char* bad : {"", "not json", "[1,2]", R"({"step": 1})", R"({"perf/step_time_seconds": 1})",
                          R"({"step": 1.5, "perf/step_time_seconds": 1})",
                          R"({"step": 1, "perf/step_time_seconds": -2})",
                          R"({"step": 1, "perf/step_time_seconds": "fast"})",
                          // 2^63 and beyond: the cast to long was undefined behaviour.
                          R"({"step": 9223372036854775807, "perf/step_time_seconds": 1})",
                          R"({"step": 1e300, "perf/step_time_seconds": 1})"})
    EXPECT_FALSE(ParseMetricsLine(bad).ok()) << bad;
}

TEST(StepLogTest, RoundTripsThroughTheStepsDocument) {
  StepLog log(3);
  log.Add({{1, 30}, {2, 4.3, 190, 7000}, {3, 4.4}, {4, 4.2}}, 5, 1);
  log.SetProcess({8, 0.6, 2e9, 3e10, 3.5});
  Result<StepsDocument> doc = ParseStepsDocument(log.ToJson(2).dump());
  ASSERT_TRUE(doc.ok()) << doc.error();
  ASSERT_EQ(doc->steps.size(), 2u);  // capped at 3, and only steps after 2
  EXPECT_EQ(doc->steps[0].step, 3);
  EXPECT_EQ(doc->malformed_lines, 1);
  ASSERT_TRUE(doc->process.has_value());
  EXPECT_EQ(doc->process->workers, 8);
  log.Restart();
  doc = ParseStepsDocument(log.ToJson(-1).dump());
  EXPECT_EQ(doc->run, 1);
  EXPECT_TRUE(doc->steps.empty());
  EXPECT_FALSE(ParseStepsDocument("{}").ok());
  EXPECT_FALSE(ParseStepsDocument(R"({"steps":[{"step":"x"}]})").ok());
}


// What a pod's owner can make its exporter answer: each absurd answer is refused with a reason
// naming what is wrong, never an exception or a figure past the bounds.
TEST(StepsDocumentTest, AbsurdAnswersAreRejectedWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"steps":[{"step":1,"step_time_seconds":1e308}]})", "step_time_seconds"},
      {R"({"steps":[{"step":1,"step_time_seconds":1e400}]})", "not a steps document"},  // out of range
      {R"({"steps":[{"step":1,"step_time_seconds":-4}]})", "step_time_seconds"},
      {R"({"steps":[{"step":5,"step_time_seconds":4},{"step":4,"step_time_seconds":4}]})", "step 4 after step 5"},
      {R"({"steps":[{"step":5,"step_time_seconds":4},{"step":5,"step_time_seconds":4}]})", "step 5 after step 5"},
      {R"({"steps":[{"step":1.5,"step_time_seconds":4}]})", "whole number"},
      {R"({"steps":[{"step":1,"step_time_seconds":NaN}]})", "not a steps document"},
      {R"({"steps":[{"step":1,"step_time_seconds":"4"}]})", "not a number"},
      {R"({"steps":[{"step":1,"step_time_seconds":4,"tflops_per_device":1e300}]})", "tflops_per_device"},
      {R"({"steps":[1,2,3]})", "not an object"},
      {R"({"steps":[{"step":1}]})", "no step or step_time_seconds"},
      {R"({"steps":[],"process":{"workers":1000000000}})", "workers"},
      {R"({"steps":[],"process":{"worker_busy_fraction":7}})", "worker_busy_fraction"},
      {R"({"steps":[],"process":{"worker_memory_bytes":-1}})", "worker_memory_bytes"},
      {R"({"steps":[],"run":-3})", "run"},
      {R"({"steps":[],"pod_uid":42})", "pod_uid"},
      {R"([])", "not a steps document"},
  };
  for (const auto& [answer, why] : cases) {
    Result<StepsDocument> doc = ParseStepsDocument(answer);
    ASSERT_FALSE(doc.ok()) << answer;
    EXPECT_EQ(doc.error().rfind("rejected: ", 0), 0u) << doc.error();
    EXPECT_NE(doc.error().find(why), std::string::npos) << answer << " -> " << doc.error();
  }
}

TEST(StepsDocumentTest, AMillionSamplesAreRejectedByCountNotRead) {
  std::string answer = R"({"steps":[)";
  for (int i = 0; i < 1000000; ++i) answer += (i ? "," : "") + std::string(R"({"step":)") + std::to_string(i) + R"(,"step_time_seconds":1})";
  answer += "]}";
  Result<StepsDocument> doc = ParseStepsDocument(answer);
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.error().find("1000000 steps in one answer"), std::string::npos) << doc.error();
  // At the cap it is read.
  std::string at_cap = R"({"steps":[)";
  for (size_t i = 0; i < kMaxStepsPerAnswer; ++i) at_cap += (i ? "," : "") + std::string(R"({"step":)") + std::to_string(i) + R"(,"step_time_seconds":1})";
  at_cap += "]}";
  EXPECT_TRUE(ParseStepsDocument(at_cap).ok());
}

TEST(StepsDocumentTest, FiguresAtTheirBoundsAreRead) {
  Result<StepsDocument> doc = ParseStepsDocument(
      R"({"pod_uid":"u","run":2,"steps":[{"step":0,"step_time_seconds":86400,"tflops_per_device":-1},)"
      R"({"step":1,"step_time_seconds":0,"tokens_per_device_per_second":1e9}],)"
      R"("process":{"workers":100000,"worker_busy_fraction":-1,"trainer_cpu_cores":-1}})");
  ASSERT_TRUE(doc.ok()) << doc.error();
  EXPECT_EQ(doc->steps.size(), 2u);
  EXPECT_EQ(doc->steps[0].step_time_seconds, 86400);
  EXPECT_EQ(doc->process->workers, 100000);
}


// A lap travels inside the /steps document and comes back as it was sent.
TEST(LapReportTest, RoundTripsInsideTheStepsDocument) {
  StepLog log;
  LapReport lap;
  lap.steps = {{1, 12.0}, {2, 0.5}, {3, 0.52}};
  lap.process = ProcessFigures{2, 0.85, 7.6e8, 3e9, 1.2};
  lap.result = LapResult{.completed = true, .outcome = "completed", .wall_seconds = 39.8, .steps = 60, .workers = 2,
                         .trainer_compile = contract::TrainerCompileVerdict{contract::TrainerCompile::kUnknown, "the trainer wrote no step"}};
  lap.result_age_seconds = 4.5;
  log.SetLap(lap);
  Result<StepsDocument> doc = ParseStepsDocument(log.ToJson(-1).dump());
  ASSERT_TRUE(doc.ok()) << doc.error();
  ASSERT_TRUE(doc->lap.has_value());
  EXPECT_EQ(doc->lap->steps.size(), 3u);
  EXPECT_DOUBLE_EQ(doc->lap->process->worker_busy_fraction, 0.85);
  ASSERT_TRUE(doc->lap->result.has_value());
  EXPECT_TRUE(doc->lap->result->completed);
  EXPECT_EQ(doc->lap->result->workers, 2);
  EXPECT_EQ(doc->lap->result->trainer_compile, lap.result->trainer_compile);
  EXPECT_DOUBLE_EQ(doc->lap->result_age_seconds, 4.5);
  // A document without a lap has none.
  EXPECT_FALSE(ParseStepsDocument(StepLog().ToJson(-1).dump())->lap.has_value());
}

// A pod's owner controls its exporter: an absurd lap refuses the whole answer, naming the lap.
TEST(LapReportTest, AbsurdLapsAreRejectedWithAReason) {
  for (const char* lap : {R"("x")", R"({"steps":[{"step":2,"step_time_seconds":1},{"step":1,"step_time_seconds":1}]})",
                          R"({"process":{"worker_busy_fraction":7}})", R"({"result":{"completed":1}})",
                          R"({"result":{"completed":true},"result_age_seconds":-3})"}) {
    Result<StepsDocument> doc = ParseStepsDocument(std::string(R"({"steps":[],"lap":)") + lap + "}");
    ASSERT_FALSE(doc.ok()) << lap;
    EXPECT_EQ(doc.error().rfind("rejected: the exporter's /steps answer: lap: ", 0), 0u) << doc.error();
  }
  nlohmann::json many = {{"steps", nlohmann::json::array()}};
  for (int i = 0; i < 10001; ++i) many["steps"].push_back({{"step", i}, {"step_time_seconds", 1}});
  EXPECT_FALSE(ParseStepsDocument(nlohmann::json({{"steps", nlohmann::json::array()}, {"lap", many}}).dump()).ok());
}

}  // namespace
}  // namespace graintune::telemetry

