// The trainer emulator's --pipeline-command mode: step times from a command's stdout become
// MaxText metrics lines (one step late, as MaxText writes them), unreadable lines are skipped,
// and a failing command is a failure. The command here is a shell printf standing in for
// bench/real_grain/paced_trainer.py, which needs its Python environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct EmulatorRun {
  int status;
  std::vector<nlohmann::json> lines;
};

EmulatorRun RunEmulator(const std::string& pipeline) {
  const std::string metrics = ::testing::TempDir() + "/emulator-metrics.txt";
  const std::string command = std::string(GRAINTUNE_TRAINER_EMULATOR_BIN) +
                              " --workers 3 --steps 4 --metrics-file " + metrics +
                              " --exit-when-done 1 --pipeline-command '" + pipeline + "' 2>/dev/null";
  EmulatorRun run{std::system(command.c_str()), {}};
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) run.lines.push_back(nlohmann::json::parse(line));
  return run;
}

TEST(TrainerEmulatorTest, StepsFromAPipelineCommandBecomeMetricsLines) {
  // {workers} and {steps} are substituted; the last step's line is never written (MaxText
  // writes a step's line when the next one ends).
  EmulatorRun run = RunEmulator("test {workers} = 3 && test {steps} = 4 && printf \"1.0 0.5\\n0.5 0.5\\n0.25 0.25\\n\"");
  ASSERT_EQ(run.status, 0);
  ASSERT_EQ(run.lines.size(), 2u);
  EXPECT_EQ(run.lines[0]["step"], 1);
  EXPECT_DOUBLE_EQ(run.lines[0]["perf/step_time_seconds"].get<double>(), 1.0);
  EXPECT_NEAR(run.lines[0]["perf/per_device_tflops_per_sec"].get<double>(), 97.5, 0.01);  // half fed
  EXPECT_EQ(run.lines[1]["step"], 2);
  EXPECT_NEAR(run.lines[1]["perf/per_device_tflops_per_sec"].get<double>(), 195.0, 0.01);  // fed
}

TEST(TrainerEmulatorTest, UnreadableLinesAreSkippedAndAFailingCommandFails) {
  EmulatorRun skipped = RunEmulator("printf \"0.5 0.5\\nnot a step\\n0.7 0.5\\n0.6 0.5\\n\"");
  ASSERT_EQ(skipped.status, 0);
  ASSERT_EQ(skipped.lines.size(), 2u);
  EXPECT_DOUBLE_EQ(skipped.lines[1]["perf/step_time_seconds"].get<double>(), 0.7);

  EmulatorRun failed = RunEmulator("printf \"0.5 0.5\\n\"; exit 3");
  EXPECT_NE(failed.status, 0);
}

}  // namespace
