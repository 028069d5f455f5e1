#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "operator/maxtext_metrics.h"
#include "operator/metrics_file_follower.h"
#include "operator/process_stats.h"
#include "operator/step_log.h"

namespace graintune::op {
namespace {

namespace fs = std::filesystem;

TEST(MaxTextMetricsTest, ReadsTheFieldsGraintuneUses) {
  Result<StepSample> s = ParseMetricsLine(
      R"({"learning/loss": 2.3, "perf/step_time_seconds": 4.3, "perf/per_device_tflops_per_sec": 195.2,)"
      R"( "perf/per_device_tokens_per_sec": 7620.0, "step": 41})");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->step, 41);
  EXPECT_DOUBLE_EQ(s->step_time_seconds, 4.3);
  EXPECT_DOUBLE_EQ(s->tflops_per_device, 195.2);
  EXPECT_DOUBLE_EQ(s->tokens_per_device_per_second, 7620.0);
  Result<StepSample> bare = ParseMetricsLine(R"({"perf/step_time_seconds": 1, "step": 0})");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->tflops_per_device, -1);
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

class FollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("graintune-follow-" + std::to_string(::getpid()))).string();
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }
  void Append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }
  std::string path_;
};

TEST_F(FollowerTest, ReturnsCompleteLinesOnceAndKeepsAPartialLine) {
  MetricsFileFollower f(path_);
  EXPECT_TRUE(f.Poll().samples.empty());  // no file yet
  Append("{\"step\": 1, \"perf/step_time_seconds\": 30}\n{\"step\": 2, \"perf/step_");
  MetricsFileFollower::Update u = f.Poll();
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 1);
  Append("time_seconds\": 4.3}\ngarbage\n");
  u = f.Poll();
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 2);
  EXPECT_DOUBLE_EQ(u.samples[0].step_time_seconds, 4.3);
  EXPECT_EQ(u.malformed, 1);
  EXPECT_FALSE(u.restarted);
  EXPECT_TRUE(f.Poll().samples.empty());  // nothing new
}

TEST_F(FollowerTest, TruncationStartsANewRun) {
  MetricsFileFollower f(path_);
  Append("{\"step\": 1, \"perf/step_time_seconds\": 30}\n{\"step\": 2, \"perf/step_time_seconds\": 4}\n");
  EXPECT_EQ(f.Poll().samples.size(), 2u);
  std::ofstream(path_, std::ios::trunc) << "{\"step\": 0, \"perf/step_time_seconds\": 9}\n";
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_TRUE(u.restarted);
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 0);
}

TEST_F(FollowerTest, AnOverlongLineIsDroppedAsMalformed) {
  MetricsFileFollower f(path_, 64);
  Append(std::string(200, 'x') + "\n{\"step\": 3, \"perf/step_time_seconds\": 4}\n");
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_EQ(u.malformed, 1);
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 3);
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

// A fake /proc: pause (1), the trainer (10), two workers (11, 12) and the exporter (20).
class ProcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("graintune-proc-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Proc(int pid, int ppid, const std::string& cmd, long ticks, long hwm_kb) {
    const fs::path d = root_ / std::to_string(pid);
    fs::create_directories(d);
    // Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime ...
    std::ofstream(d / "stat") << pid << " (python3 x) S " << ppid << " 1 1 0 -1 0 0 0 0 0 " << ticks
                              << " 0 0 0 20 0 1 0";
    std::ofstream(d / "status") << "Name:\tpython3\nVmHWM:\t" << hwm_kb << " kB\n";
    std::string c = cmd;
    for (char& ch : c) if (ch == ' ') ch = '\0';
    std::ofstream(d / "cmdline") << c;
  }
  fs::path root_;
};

TEST_F(ProcTest, FindsTrainerAndWorkersAndComputesRates) {
  Proc(1, 0, "/pause", 0, 100);
  Proc(10, 1, "python3 -m MaxText.train base.yml", 1000, 30'000'000);
  Proc(11, 10, "python3 -m MaxText.train base.yml", 500, 2'000'000);
  Proc(12, 10, "python3 -m MaxText.train base.yml", 500, 2'500'000);
  Proc(20, 1, "/graintune-exporter", 5, 10'000);
  ProcessSampler sampler(root_.string());
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ProcessFigures> a = sampler.Sample(t0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->workers, 2);
  EXPECT_DOUBLE_EQ(a->worker_memory_bytes, 2'500'000 * 1024.0);
  EXPECT_DOUBLE_EQ(a->trainer_memory_bytes, 30'000'000 * 1024.0);
  EXPECT_EQ(a->worker_busy_fraction, -1);  // needs two samples
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  // Ten seconds later: each worker used 5 s of cpu (half busy), the trainer 20 s (2 cores).
  Proc(10, 1, "python3 -m MaxText.train base.yml", 1000 + static_cast<long>(20 * hz), 30'000'000);
  Proc(11, 10, "python3 -m MaxText.train base.yml", 500 + static_cast<long>(5 * hz), 2'000'000);
  Proc(12, 10, "python3 -m MaxText.train base.yml", 500 + static_cast<long>(5 * hz), 2'500'000);
  std::optional<ProcessFigures> b = sampler.Sample(t0 + std::chrono::seconds(10));
  ASSERT_TRUE(b.has_value());
  EXPECT_NEAR(b->worker_busy_fraction, 0.5, 1e-9);
  EXPECT_NEAR(b->trainer_cpu_cores, 2.0, 1e-9);
}

TEST_F(ProcTest, NoTrainerVisibleIsNothingToReport) {
  Proc(1, 0, "/pause", 0, 100);
  ProcessSampler sampler(root_.string());
  EXPECT_FALSE(sampler.Sample(std::chrono::steady_clock::now()).has_value());
}

}  // namespace
}  // namespace graintune::op
