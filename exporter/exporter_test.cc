// The exporter's readers: following MaxText's metrics file, and sampling /proc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "exporter/lap_watch.h"
#include "exporter/start_check_watch.h"
#include "exporter/metrics_file_follower.h"
#include "exporter/process_stats.h"

namespace graintune::exporter {
namespace {

namespace fs = std::filesystem;
using telemetry::ProcessFigures;

// Lines made from a real MaxText file's: a step time above every other in the file, the step
// as a float, and run_name.
std::string MaxTextLine(long step, double seconds, const std::string& run = "tiny") {
  return "{\"learning/loss\": 8.0, \"perf/step_time_seconds\": " + std::to_string(seconds) +
         ", \"perf/per_device_tflops_per_sec\": 0.01, \"step\": " + std::to_string(step) +
         ".0, \"run_name\": \"" + run + "\"}\n";
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

// A run resumed from a checkpoint appends to the file, starting at the checkpoint's step.
TEST_F(FollowerTest, AStepThatGoesBackIsANewRunEvenInOnePoll) {
  MetricsFileFollower f(path_);
  Append(MaxTextLine(0, 60) + MaxTextLine(1, 3) + MaxTextLine(2, 0.5) + MaxTextLine(3, 0.5));
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_FALSE(u.restarted);
  EXPECT_EQ(u.samples.size(), 4u);
  Append(MaxTextLine(4, 0.5) + MaxTextLine(2, 55) + MaxTextLine(3, 2));
  u = f.Poll();
  EXPECT_TRUE(u.restarted);
  ASSERT_EQ(u.samples.size(), 2u);  // only the new run's steps
  EXPECT_EQ(u.samples[0].step, 2);
  EXPECT_DOUBLE_EQ(u.samples[0].step_time_seconds, 55);
  EXPECT_EQ(u.lines, 3);
  EXPECT_EQ(u.malformed, 0);
  Append(MaxTextLine(4, 0.5));
  EXPECT_FALSE(f.Poll().restarted);
}

TEST_F(FollowerTest, ANewRunNameIsANewRun) {
  MetricsFileFollower f(path_);
  Append(MaxTextLine(5, 1, "a") + MaxTextLine(6, 1, "a"));
  EXPECT_FALSE(f.Poll().restarted);
  Append(MaxTextLine(7, 40, "b"));
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_TRUE(u.restarted);
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 7);
}

TEST_F(FollowerTest, EvalAndNonFiniteLinesAreNotMalformed) {
  MetricsFileFollower f(path_);
  Append(MaxTextLine(1, 3) + "{\"eval/avg_loss\": 7.9, \"step\": 1.0, \"run_name\": \"tiny\"}\n" +
         "{\"learning/loss\": NaN, \"perf/step_time_seconds\": 0.5, \"step\": 2.0}\n");
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_EQ(u.lines, 3);
  EXPECT_EQ(u.malformed, 0);
  EXPECT_FALSE(u.restarted);  // the eval line's step 1 is no training step
  ASSERT_EQ(u.samples.size(), 2u);
  EXPECT_EQ(u.samples[1].step, 2);
}

TEST_F(FollowerTest, AnOverlongLineIsDroppedAsMalformed) {
  MetricsFileFollower f(path_, 64);
  Append(std::string(200, 'x') + "\n{\"step\": 3, \"perf/step_time_seconds\": 4}\n");
  MetricsFileFollower::Update u = f.Poll();
  EXPECT_EQ(u.malformed, 1);
  ASSERT_EQ(u.samples.size(), 1u);
  EXPECT_EQ(u.samples[0].step, 3);
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
    // The kernel's Name: the executable's file name (at most 15 characters).
    const std::string exe = cmd.substr(0, cmd.find(' '));
    std::ofstream(d / "status") << "Name:\t" << exe.substr(exe.rfind('/') + 1).substr(0, 15)
                                << "\nVmHWM:\t" << hwm_kb << " kB\n";
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

// maxtext 0.2.x's entry point is lower case.
TEST_F(ProcTest, FindsMaxTextsOwnEntryPointWhateverItsCase) {
  Proc(1, 0, "/pause", 0, 100);
  Proc(10, 1, "python -m maxtext.trainers.pre_train.train hardware=cpu", 1000, 30'000'000);
  Proc(11, 10, "python -c from multiprocessing.spawn import spawn_main", 500, 2'000'000);
  // What maxtext 0.2.5 with grain_worker_count=1 runs beside its one worker: not a worker.
  Proc(12, 10, "python -c from multiprocessing.resource_tracker import main;main(8)", 5, 9'000'000);
  std::optional<ProcessFigures> a = ProcessSampler(root_.string()).Sample(std::chrono::steady_clock::now());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->workers, 1);
  EXPECT_DOUBLE_EQ(a->worker_memory_bytes, 2'000'000 * 1024.0);
  EXPECT_DOUBLE_EQ(a->trainer_memory_bytes, 30'000'000 * 1024.0);
}

// xpk's wrapper: bash -c "... (python3 -m MaxText.train ...) & while kill -0 ...; sleep 5".
// The shells hold the trainer's command line in theirs; they and their sleep are no workers.
TEST_F(ProcTest, TheShellsWrappingTheTrainerAreNeitherTrainerNorWorkers) {
  const std::string script = "bash -c (python3 -m MaxText.train base.yml grain_worker_count=2) & PID=$!";
  Proc(1, 0, "/pause", 0, 100);
  Proc(7, 1, script, 10, 4'000);
  Proc(8, 7, script, 10, 4'000);  // the subshell
  Proc(9, 7, "sleep 5", 0, 1'000);
  Proc(10, 8, "python3 -m MaxText.train base.yml grain_worker_count=2", 1000, 30'000'000);
  Proc(11, 10, "python3 -m MaxText.train base.yml grain_worker_count=2", 500, 2'000'000);
  Proc(12, 10, "python3 -m MaxText.train base.yml grain_worker_count=2", 500, 2'500'000);
  std::optional<ProcessFigures> a = ProcessSampler(root_.string()).Sample(std::chrono::steady_clock::now());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->workers, 2);
  EXPECT_DOUBLE_EQ(a->trainer_memory_bytes, 30'000'000 * 1024.0);
  // A shell alone is no trainer: nothing is reported until Python runs.
  fs::remove_all(root_ / "10");
  fs::remove_all(root_ / "11");
  fs::remove_all(root_ / "12");
  EXPECT_FALSE(ProcessSampler(root_.string()).Sample(std::chrono::steady_clock::now()).has_value());
}

// During a practice lap graintune-launcher runs the trainer's command: its argv holds that
// command, so it matches; it is no trainer, and the lap's MaxText is (its workers are the lap's).
TEST_F(ProcTest, TheLauncherRunningALapIsNeitherTrainerNorWorker) {
  Proc(1, 0, "/pause", 0, 100);
  Proc(5, 1, "/graintune-launcher/graintune-launcher --lap-steps=20 -- bash -c python3 -m MaxText.train", 1, 3'000);
  Proc(6, 5, "bash -c python3 -m MaxText.train base.yml steps=20", 1, 4'000);
  Proc(7, 6, "python3 -m MaxText.train base.yml steps=20", 1000, 30'000'000);
  Proc(8, 7, "python3 -m MaxText.train base.yml steps=20", 500, 2'000'000);
  std::optional<ProcessFigures> a = ProcessSampler(root_.string()).Sample(std::chrono::steady_clock::now());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->workers, 1);
  EXPECT_DOUBLE_EQ(a->worker_memory_bytes, 2'000'000 * 1024.0);
  EXPECT_DOUBLE_EQ(a->trainer_memory_bytes, 30'000'000 * 1024.0);
}

// The exporter runs with --trainer-pattern PATTERN: its own command line matches; it is no trainer.
TEST_F(ProcTest, TheExporterItselfIsNoTrainer) {
  const int self = static_cast<int>(::getpid());
  Proc(self, 1, "/graintune-exporter --trainer-pattern maxtext.trainers.pre_train.train", 5, 10'000);
  ProcessSampler sampler(root_.string(), "maxtext.trainers.pre_train.train");
  EXPECT_FALSE(sampler.Sample(std::chrono::steady_clock::now()).has_value());
  Proc(self + 1, 1, "python3 -m maxtext.trainers.pre_train.train", 1000, 30'000'000);
  std::optional<ProcessFigures> a = sampler.Sample(std::chrono::steady_clock::now());
  ASSERT_TRUE(a.has_value());
  EXPECT_DOUBLE_EQ(a->trainer_memory_bytes, 30'000'000 * 1024.0);
}

// With a shared process namespace every process of the pod is read, and any of them can name
// itself "" (prctl PR_SET_NAME) or be caught half-written: the sampler skips or reads them, and
// never throws (an empty Name: once crash-looped the exporter).
TEST_F(ProcTest, ProcessesWithEmptyNamesOrTruncatedStatAreReadWithoutThrowing) {
  Proc(1, 0, "/pause", 0, 100);
  Proc(10, 1, "python3 -m MaxText.train base.yml", 1000, 30'000'000);
  Proc(11, 10, "python3 -m MaxText.train base.yml", 500, 2'000'000);
  std::ofstream(root_ / "11" / "status") << "Name:\nVmHWM:\t2000000 kB\n";   // named ""
  Proc(12, 1, "x", 0, 100);
  std::ofstream(root_ / "12" / "stat") << "12 (x)";                             // nothing after ')'
  Proc(13, 1, "y", 0, 100);
  std::ofstream(root_ / "13" / "status") << "Name:   \t";                       // blanks only
  fs::create_directories(root_ / "14");                                          // no files at all
  std::optional<ProcessFigures> a;
  EXPECT_NO_THROW(a = ProcessSampler(root_.string()).Sample(std::chrono::steady_clock::now()));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->workers, 1);
  EXPECT_DOUBLE_EQ(a->worker_memory_bytes, 2'000'000 * 1024.0);
}

TEST_F(ProcTest, NoTrainerVisibleIsNothingToReport) {
  Proc(1, 0, "/pause", 0, 100);
  ProcessSampler sampler(root_.string());
  EXPECT_FALSE(sampler.Sample(std::chrono::steady_clock::now()).has_value());
}


// The lap's figures are the lap's: samples of its warm-up and of the trainer after its result
// are left out, its memory is the highest seen, and its result is kept with its age.
TEST(LapWatchTest, KeepsTheLapsStepsFiguresAndResult) {
  const fs::path dir = fs::temp_directory_path() / ("graintune-lap-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string metrics = (dir / "lap.jsonl").string(), result = (dir / "lap-result.json").string();
  LapWatch watch(metrics, result, /*warmup_steps=*/2);
  const auto t0 = std::chrono::steady_clock::time_point{};
  auto at = [&](int s) { return t0 + std::chrono::seconds(s); };
  watch.Poll(at(0), ProcessFigures{2, 1.0, 1e8, 1e9, 1});
  EXPECT_FALSE(watch.Report(at(0)).has_value());  // a pod without a lap (yet) shows none
  std::ofstream(metrics, std::ios::app) << MaxTextLine(1, 20) << MaxTextLine(2, 0.5);
  watch.Poll(at(1), ProcessFigures{2, 1.0, 2e8, 1e9, 1});  // warm-up: every worker fills its buffer
  std::ofstream(metrics, std::ios::app) << MaxTextLine(3, 0.5) << MaxTextLine(4, 0.5);
  watch.Poll(at(2), ProcessFigures{2, 0.2, 3e8, 2e9, 1});
  watch.Poll(at(3), ProcessFigures{2, 0.4, 2e8, 1e9, 3});
  std::optional<telemetry::LapReport> running = watch.Report(at(3));
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->steps.size(), 4u);
  EXPECT_FALSE(running->result.has_value());
  EXPECT_NEAR(running->process->worker_busy_fraction, 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(running->process->worker_memory_bytes, 3e8);
  EXPECT_DOUBLE_EQ(running->process->trainer_memory_bytes, 2e9);
  EXPECT_NEAR(running->process->trainer_cpu_cores, 2, 1e-9);

  std::ofstream(result)
      << R"({"completed":true,"outcome":"completed","wall_seconds":30,"steps":4,"workers":2,"trainer_compile":"watching"})";
  watch.Poll(at(4), ProcessFigures{2, 1.0, 9e9, 9e9, 9});  // the result came: this is the trainer
  watch.Poll(at(5), ProcessFigures{8, 1.0, 9e9, 9e9, 9});
  std::optional<telemetry::LapReport> done = watch.Report(at(10));
  ASSERT_TRUE(done && done->result);
  EXPECT_TRUE(done->result->completed);
  EXPECT_DOUBLE_EQ(done->result_age_seconds, 6);
  EXPECT_NEAR(done->process->worker_busy_fraction, 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(done->process->worker_memory_bytes, 3e8);
  EXPECT_EQ(done->process->workers, 2);
  EXPECT_FALSE(done->result->trainer_compile.has_value());

  // Then the launcher adds the value it starts the trainer with: read once.
  std::ofstream(result, std::ios::trunc)
      << R"({"completed":true,"outcome":"completed","wall_seconds":30,"steps":4,"workers":2,"trainer_compile":"watching",)"
      << R"("trainer_workers":6,"trainer_value_why":"the run's value from its practice lap"})";
  watch.Poll(at(6), ProcessFigures{8, 1.0, 9e9, 9e9, 9});
  std::optional<telemetry::LapReport> started = watch.Report(at(6));
  ASSERT_TRUE(started && started->result);
  EXPECT_EQ(started->result->trainer_workers, 6);
  EXPECT_EQ(started->result->trainer_value_why, "the run's value from its practice lap");
  EXPECT_FALSE(started->result->trainer_compile.has_value());

  // Later the launcher's watcher adds its verdict on the trainer's compile: read, and nothing else
  // of the lap changes (a rewritten count, time or starting value is not taken).
  std::ofstream(result, std::ios::trunc)
      << R"({"completed":true,"outcome":"completed","wall_seconds":99,"steps":4,"workers":7,"trainer_compile":"cache hit",)"
      << R"("trainer_workers":9,"trainer_value_why":"rewritten"})";
  watch.Poll(at(11), ProcessFigures{8, 1.0, 9e9, 9e9, 9});
  std::optional<telemetry::LapReport> judged = watch.Report(at(11));
  ASSERT_TRUE(judged && judged->result && judged->result->trainer_compile);
  EXPECT_EQ(judged->result->trainer_compile->verdict, contract::TrainerCompile::kCacheHit);
  EXPECT_DOUBLE_EQ(judged->result->wall_seconds, 30);
  EXPECT_EQ(judged->result->workers, 2);
  EXPECT_EQ(judged->result->trainer_workers, 6);
  EXPECT_DOUBLE_EQ(judged->process->worker_memory_bytes, 3e8);
  fs::remove_all(dir);
}

// A result that says no watcher is coming (no "watching") takes no verdict written into the file
// later (it is not the launcher's); the file is read again only for the trainer's starting value.
TEST(LapWatchTest, AResultWithNoWatcherComingTakesNoLaterVerdict) {
  const fs::path dir = fs::temp_directory_path() / ("graintune-lap-once-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string result = (dir / "lap-result.json").string();
  LapWatch watch((dir / "lap.jsonl").string(), result);
  const auto t0 = std::chrono::steady_clock::time_point{};
  std::ofstream(result) << R"({"completed":true,"outcome":"completed","wall_seconds":30,"steps":4,"workers":2})";
  watch.Poll(t0, std::nullopt);
  ASSERT_TRUE(watch.Report(t0) && watch.Report(t0)->result);
  std::ofstream(result, std::ios::trunc)
      << R"({"completed":true,"workers":2,"trainer_compile":"cache hit","trainer_workers":2,"trainer_value_why":"x"})";
  watch.Poll(t0 + std::chrono::seconds(1), std::nullopt);
  EXPECT_FALSE(watch.Report(t0)->result->trainer_compile.has_value());
  EXPECT_EQ(watch.Report(t0)->result->trainer_workers, 2);
  fs::remove_all(dir);
}

// A result file that is not the launcher's (garbage, or far too large) is no result.
TEST(LapWatchTest, AResultThatIsNotOneIsNoResult) {
  const fs::path dir = fs::temp_directory_path() / ("graintune-lap-bad-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string result = (dir / "lap-result.json").string();
  LapWatch watch((dir / "lap.jsonl").string(), result);
  std::ofstream(result) << "not json";
  watch.Poll({}, std::nullopt);
  EXPECT_FALSE(watch.Report({}).has_value());
  std::ofstream(result, std::ios::trunc) << R"({"completed":true,"outcome":")" << std::string(1 << 20, 'x') << R"("})";
  watch.Poll({}, std::nullopt);
  EXPECT_FALSE(watch.Report({}).has_value());
  std::ofstream(result, std::ios::trunc) << R"({"completed":false,"outcome":"exited 1"})";
  watch.Poll({}, std::nullopt);
  ASSERT_TRUE(watch.Report({}).has_value());
  EXPECT_FALSE(watch.Report({})->result->completed);
  fs::remove_all(dir);
}

// The start check's report: read when it appears and each time it is replaced (a script that
// starts the trainer twice), a file that is no report is ignored, and so is one too large.
TEST(StartCheckWatchTest, ReadsEachReportTheCheckWritesOnce) {
  const fs::path dir = fs::temp_directory_path() / ("graintune-start-check-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "start-check.json").string();
  StartCheckWatch watch(file);
  EXPECT_FALSE(watch.Poll().has_value());  // none yet
  auto write = [&](const std::string& text) {  // whole, renamed into place, as the check does
    std::ofstream(file + ".tmp") << text;
    fs::rename(file + ".tmp", file);
  };
  write(R"({"checked": true, "written_value": 1, "started_value": 2, "changed": true, "why": "resumes"})");
  std::optional<telemetry::StartCheckReport> first = watch.Poll();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->started_value, 2);
  EXPECT_FALSE(watch.Poll().has_value());  // unchanged: not read again
  write(R"({"checked": true, "written_value": 3, "started_value": 3, "changed": false, "why": "a second start"})");
  std::optional<telemetry::StartCheckReport> second = watch.Poll();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->written_value, 3);
  write("not json");
  EXPECT_FALSE(watch.Poll().has_value());
  write(std::string(telemetry::kMaxStartCheckReportBytes + 1, ' '));
  EXPECT_FALSE(watch.Poll().has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace graintune::exporter
