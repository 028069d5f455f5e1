#include "launcher/compile_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace graintune::launcher {
namespace {

using contract::TrainerCompile;
namespace fs = std::filesystem;

TEST(LocalCacheDirTest, ExpandsHomeAsMaxTextDoes) {
  EXPECT_EQ(LocalCacheDir("~/jax_cache", "/home/u"), "/home/u/jax_cache");
  EXPECT_EQ(LocalCacheDir("~", "/home/u"), "/home/u");
  EXPECT_EQ(LocalCacheDir("/cache/jax", nullptr), "/cache/jax");
  EXPECT_EQ(LocalCacheDir("relative/cache", "/home/u"), "relative/cache");
}

TEST(LocalCacheDirTest, ABucketOrAHomelessTildeIsNotALocalFolder) {
  EXPECT_EQ(LocalCacheDir("gs://bucket/jax_cache", "/home/u"), std::nullopt);
  EXPECT_EQ(LocalCacheDir("~/jax_cache", nullptr), std::nullopt);
  EXPECT_EQ(LocalCacheDir("~/jax_cache", ""), std::nullopt);
  EXPECT_EQ(LocalCacheDir("", "/home/u"), std::nullopt);
}

class CompileWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("compile-watch-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "cache");
  }
  void TearDown() override {
    if (trainer_ > 0) {
      kill(trainer_, SIGKILL);
      waitpid(trainer_, nullptr, 0);
    }
    fs::remove_all(root_);
  }
  void Touch(const fs::path& p, const std::string& text = "") { std::ofstream(p, std::ios::app) << text; }
  // A stand-in trainer: a child that lives until killed.
  pid_t StartTrainer() {
    trainer_ = fork();
    if (trainer_ == 0) {
      pause();
      _exit(0);
    }
    return trainer_;
  }
  CompileWatch Watch() {
    return {.trainer = StartTrainer(), .cache_dir = (root_ / "cache").string(),
            .before = TrainStepsIn((root_ / "cache").string()), .metrics_file = (root_ / "metrics.jsonl").string(),
            .metrics_offset = 0, .limit = std::chrono::seconds(30)};
  }
  fs::path root_;
  pid_t trainer_ = -1;
};

TEST_F(CompileWatchTest, ListsOnlyTrainSteps) {
  Touch(root_ / "cache" / "jit_train_step-1f2e");
  Touch(root_ / "cache" / "jit_initialize_state-99");
  EXPECT_EQ(TrainStepsIn((root_ / "cache").string()), std::set<std::string>{"jit_train_step-1f2e"});
  EXPECT_TRUE(TrainStepsIn((root_ / "absent").string()).empty());
}

TEST_F(CompileWatchTest, AFirstStepWithNoNewTrainStepIsACacheHit) {
  Touch(root_ / "cache" / "jit_train_step-lap");
  Touch(root_ / "metrics.jsonl", "{\"step\": 0}\n");  // an earlier start's step, before the offset
  CompileWatch watch = Watch();
  watch.metrics_offset = static_cast<long long>(fs::file_size(root_ / "metrics.jsonl"));
  Touch(root_ / "metrics.jsonl", "{\"step\": 0, \"perf/step_time_seconds\": 5.4}\n");
  EXPECT_EQ(WatchTrainerCompile(watch).verdict, TrainerCompile::kCacheHit);
}

TEST_F(CompileWatchTest, ANewTrainStepIsACompile) {
  Touch(root_ / "cache" / "jit_train_step-lap");
  const CompileWatch watch = Watch();
  Touch(root_ / "cache" / "jit_train_step-trainer");
  EXPECT_EQ(WatchTrainerCompile(watch).verdict, TrainerCompile::kCompiled);
}

TEST_F(CompileWatchTest, AHalfWrittenLineIsNoStep) {
  Touch(root_ / "cache" / "jit_train_step-lap");
  CompileWatch watch = Watch();
  watch.limit = std::chrono::seconds(2);
  Touch(root_ / "metrics.jsonl", "{\"step\": 0");
  const contract::TrainerCompileVerdict verdict = WatchTrainerCompile(watch);
  EXPECT_EQ(verdict.verdict, TrainerCompile::kUnknown);
  EXPECT_EQ(verdict.why, "the trainer wrote no step within 2 s");
}

TEST_F(CompileWatchTest, ATrainerThatExitsWithoutAStepIsUnknown) {
  Touch(root_ / "cache" / "jit_train_step-lap");
  const CompileWatch watch = Watch();
  kill(trainer_, SIGKILL);
  waitpid(trainer_, nullptr, 0);
  trainer_ = -1;
  const contract::TrainerCompileVerdict verdict = WatchTrainerCompile(watch);
  EXPECT_EQ(verdict.verdict, TrainerCompile::kUnknown);
  EXPECT_EQ(verdict.why, "the trainer wrote no step");
}

TEST(WatcherArgsTest, RoundTrip) {
  const CompileWatch watch{.trainer = 4242, .cache_dir = "/root/jax_cache",
                           .before = {"jit_train_step-a", "jit_train_step-b"}, .metrics_file = "/m/metrics.jsonl",
                           .metrics_offset = 17, .limit = std::chrono::seconds(600)};
  const std::vector<std::string> args = WatcherArgs(watch, "/m/lap-result.json");
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args[0], "graintune-launcher");
  EXPECT_TRUE(args[1].starts_with(kWatchFlag));
  auto parsed = WatchFromArgs(std::vector<std::string>(args.begin() + 1, args.end()));
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->first.trainer, 4242);
  EXPECT_EQ(parsed->first.cache_dir, watch.cache_dir);
  EXPECT_EQ(parsed->first.before, watch.before);
  EXPECT_EQ(parsed->first.metrics_file, watch.metrics_file);
  EXPECT_EQ(parsed->first.metrics_offset, 17);
  EXPECT_EQ(parsed->first.limit, std::chrono::seconds(600));
  EXPECT_EQ(parsed->second, "/m/lap-result.json");
}

TEST(WatcherArgsTest, AMissingOrMalformedFlagIsAnError) {
  EXPECT_FALSE(WatchFromArgs({"--watch-trainer-compile=12"}).ok());
  auto bad = WatchFromArgs({"--watch-trainer-compile=x", "--compile-cache-dir=/c", "--trainer-metrics-file=/m",
                            "--metrics-offset=0", "--watch-limit=60s", "--result-file=/r"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("watch-trainer-compile"), std::string::npos) << bad.error();
}

}  // namespace
}  // namespace graintune::launcher
