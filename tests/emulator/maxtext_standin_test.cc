// maxtext_standin reads MaxText's words as MaxText does (the last one wins, then M_ env), writes
// a metrics line per step one step late, forks its workers as Grain does, and is data-bound when
// its workers deliver less than a step needs (a floor on the step time that cpu time sets).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/controlplane/wait_for.h"

extern char** environ;

namespace {

std::vector<nlohmann::json> MetricsLines(const std::string& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

int RunStandIn(const std::string& arguments) {
  const std::string command = std::string(GRAINTUNE_MAXTEXT_STANDIN_BIN) + " " + arguments + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MaxTextStandInTest, ReadsMaxTextsWordsAndWritesAStepLineOneStepLate) {
  const std::string metrics = ::testing::TempDir() + "/standin-metrics.jsonl";
  ::setenv("M_STEPS", "4", 1);
  // The later grain_worker_count wins (the first, -1, would be refused); steps comes from M_STEPS.
  const int status = RunStandIn("--compute-ms 10 --compile-ms 0 --record-cpu-us 100 --worker-mib 1 -- -m MaxText.train "
                         "base.yml grain_worker_count=-1 grain_worker_count=2 per_device_batch_size=2 "
                         "max_target_length=1024 metrics_file=" + metrics);
  ::unsetenv("M_STEPS");
  ASSERT_EQ(status, 0);
  const std::vector<nlohmann::json> lines = MetricsLines(metrics);
  ASSERT_EQ(lines.size(), 3u);  // the last step's line is never written
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["step"], static_cast<int>(i) + 1);
    EXPECT_GT(lines[i]["perf/step_time_seconds"].get<double>(), 0.0);
  }
  // 2 x 1024 tokens per chip: a step's tokens per chip per second is that over its time.
  EXPECT_NEAR(lines[0]["perf/per_device_tokens_per_sec"].get<double>() * lines[0]["perf/step_time_seconds"].get<double>(),
              2048.0, 25.0);  // the step time is written to 0.1 ms
}

TEST(MaxTextStandInTest, RefusesAMissingOrNegativeWorkerCount) {
  EXPECT_EQ(RunStandIn("--compile-ms 0 -- -m MaxText.train base.yml steps=2"), 2);
  EXPECT_EQ(RunStandIn("--compile-ms 0 -- -m MaxText.train base.yml steps=2 grain_worker_count=-1"), 2);
  EXPECT_EQ(RunStandIn("--no-such-flag 1 -- grain_worker_count=1 steps=2"), 2);
}

TEST(MaxTextStandInTest, ForksItsWorkersAsChildrenThatShareItsCommandLine) {
  std::vector<std::string> args = {GRAINTUNE_MAXTEXT_STANDIN_BIN, "--compute-ms", "200", "--compile-ms", "0",
                                   "--record-cpu-us", "100", "--worker-mib", "1", "--", "-m", "MaxText.train",
                                   "grain_worker_count=3", "steps=100"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  auto children = [&] {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    std::vector<int> pids;
    for (int child; in >> child;) pids.push_back(child);
    return pids;
  };
  const bool forked = graintune::testing::WaitFor([&] { return children().size() == 3; }, std::chrono::seconds(30));
  std::string command_line;
  if (forked) {
    std::ifstream in("/proc/" + std::to_string(children()[0]) + "/cmdline");
    std::getline(in, command_line, '\0');
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(forked);
  EXPECT_EQ(command_line, GRAINTUNE_MAXTEXT_STANDIN_BIN);
}

TEST(MaxTextStandInTest, OneWorkerSlowerThanTheComputeMakesItDataBound) {
  // 8 records of 20 ms of cpu each take 160 ms of one worker's cpu a step, against 10 ms of
  // compute: however fast the machine, the steps cannot average under the cpu they need (the
  // worker never gets ahead, so the pipe holds nothing to spare).
  const std::string metrics = ::testing::TempDir() + "/standin-starved.jsonl";
  ASSERT_EQ(RunStandIn("--compute-ms 10 --compile-ms 0 --records-per-step 8 --record-cpu-us 20000 --worker-mib 1 -- "
                "grain_worker_count=1 steps=16 metrics_file=" + metrics),
            0);
  const std::vector<nlohmann::json> lines = MetricsLines(metrics);
  ASSERT_EQ(lines.size(), 15u);
  double later = 0;
  for (size_t i = 10; i < lines.size(); ++i) later += lines[i]["perf/step_time_seconds"].get<double>();
  EXPECT_GE(later / 5, 0.15);
}

}  // namespace
