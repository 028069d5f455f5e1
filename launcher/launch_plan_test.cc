#include "launcher/launch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace graintune::launcher {
namespace {

const LapOverrides kOverrides{.steps = 40,
                              .output_directory = "/graintune-launcher/lap",
                              .run_name = "graintune-practice-lap",
                              .metrics_file = "/graintune-metrics/lap.jsonl"};

TEST(LapWordsTest, KeepTheLapOffTheRun) {
  const std::vector<std::string> words = LapWords(kOverrides);
  for (const char* expected :
       {"steps=40", "enable_checkpointing=false", "base_output_directory=/graintune-launcher/lap",
        "run_name=graintune-practice-lap", "metrics_file=/graintune-metrics/lap.jsonl",
        "eval_interval=-1", "profiler=''", "enable_goodput_recording=false"})
    EXPECT_NE(std::find(words.begin(), words.end(), expected), words.end()) << expected;
  EXPECT_EQ(std::count_if(words.begin(), words.end(),
                          [](const std::string& w) { return w.starts_with("learning_rate_schedule_steps="); }),
            0);
  LapOverrides with_schedule = kOverrides;
  with_schedule.schedule_steps = 9000;
  const std::vector<std::string> compiled_like_the_trainer = LapWords(with_schedule);
  EXPECT_EQ(compiled_like_the_trainer.back(), "learning_rate_schedule_steps=9000");
}

TEST(LapMarkerTest, SitsBesideTheLapsFolderWhateverItsTrailingSlashes) {
  EXPECT_EQ(LapMarkerPath("/graintune/lap"), "/graintune/lap.started");
  EXPECT_EQ(LapMarkerPath("/graintune/lap//"), "/graintune/lap.started");
  EXPECT_EQ(LapMarkerPath("lap"), "lap.started");
}

TEST(LapWordsTest, TheirKeysAsMaxTextsEnvironmentNamesThem) {
  EXPECT_EQ(EnvNamesOf({"steps=40", "metrics_file=/m", "profiler=''"}),
            (std::vector<std::string>{"M_STEPS", "M_METRICS_FILE", "M_PROFILER"}));
}

TEST(LapArgvTest, ExecFormArgsGetTheLapsWordsAfterTheLastOverride) {
  const std::vector<std::string> argv = {"python3", "-m", "maxtext.trainers.pre_train.train",
                                         "base.yml", "grain_worker_count=12", "steps=900",
                                         "2"};
  Result<std::vector<std::string>> lap =
      LapArgv(argv, {.arg = 5, .in_script = false, .offset = 0}, {"steps=40", "run_name=lap"});
  ASSERT_TRUE(lap.ok()) << lap.error();
  EXPECT_EQ(lap.value(), (std::vector<std::string>{"python3", "-m", "maxtext.trainers.pre_train.train",
                                                   "base.yml", "grain_worker_count=12", "steps=900",
                                                   "steps=40", "run_name=lap", "2"}));
}

TEST(LapArgvTest, AScriptGetsTheWordsAtTheGivenByteAndNothingElseMoves) {
  const std::string script =
      "cd /app && python3 -m maxtext.trainers.pre_train.train base.yml \"run_name=r1\" 2>&1 | tee log";
  const size_t after_run_name = script.find("\" 2>&1") + 1;
  Result<std::vector<std::string>> lap =
      LapArgv({"bash", "-c", script}, {.arg = 2, .in_script = true, .offset = after_run_name},
              {"steps=40", "run_name=lap"});
  ASSERT_TRUE(lap.ok()) << lap.error();
  EXPECT_EQ(lap.value()[2],
            "cd /app && python3 -m maxtext.trainers.pre_train.train base.yml \"run_name=r1\" "
            "steps=40 run_name=lap 2>&1 | tee log");
  EXPECT_EQ(lap.value()[0], "bash");
}

// A word that is not plain shell (MaxText's empty profiler, a path with a space or a `$`) reaches
// the trainer as the same bytes once bash has read the script.
TEST(LapArgvTest, AWordThatIsNotPlainShellReachesTheCommandAsItIs) {
  const std::vector<std::string> words = {"profiler=''", "base_output_directory=/lap dir/$x\\\"`"};
  Result<std::vector<std::string>> lap =
      LapArgv({"bash", "-c", "printf '%s\\n'"}, {.arg = 2, .in_script = true, .offset = 13}, words);
  ASSERT_TRUE(lap.ok()) << lap.error();
  std::string script = lap.value()[2];
  for (size_t at = 0; (at = script.find('\'', at)) != std::string::npos; at += 4)
    script.replace(at, 1, "'\\''");  // into single quotes for popen's sh -c
  FILE* shell = popen(("bash -c '" + script + "'").c_str(), "r");
  ASSERT_NE(shell, nullptr);
  std::string printed;
  for (int c; (c = fgetc(shell)) != EOF;) printed += static_cast<char>(c);
  ASSERT_EQ(pclose(shell), 0) << lap.value()[2];
  EXPECT_EQ(printed, words[0] + "\n" + words[1] + "\n") << lap.value()[2];
}

TEST(LapArgvTest, AnInsertionOutsideTheCommandIsAnError) {
  EXPECT_FALSE(LapArgv({"python3"}, {.arg = 1, .in_script = false, .offset = 0}, {"steps=1"}).ok());
  Result<std::vector<std::string>> past_the_end =
      LapArgv({"bash", "-c", "train"}, {.arg = 2, .in_script = true, .offset = 6}, {"steps=1"});
  ASSERT_FALSE(past_the_end.ok());
  EXPECT_NE(past_the_end.error().find("byte 6 of a script of 5 bytes"), std::string::npos);
}

TEST(WithValueTest, RewritesOnlyTheValuesBytes) {
  const std::vector<std::string> argv = {"bash", "-c", "train grain_worker_count=64 steps=9"};
  Result<Command> trainer =
      WithValue(argv, {.arg = 2, .begin = 25, .end = 27, .env_name = ""}, 64, 9, std::nullopt);
  ASSERT_TRUE(trainer.ok()) << trainer.error();
  EXPECT_EQ(trainer.value().argv[2], "train grain_worker_count=9 steps=9");
  EXPECT_TRUE(trainer.value().set_env.empty());
}

TEST(WithValueTest, AnEnvSiteSetsItsVariable) {
  const ValueSite site{.arg = 0, .begin = 0, .end = 0, .env_name = "M_GRAIN_WORKER_COUNT"};
  Result<Command> trainer = WithValue({"train"}, site, 3, 7, "3");
  ASSERT_TRUE(trainer.ok());
  EXPECT_EQ(trainer.value().argv, std::vector<std::string>{"train"});
  ASSERT_EQ(trainer.value().set_env.size(), 1u);
  EXPECT_EQ(trainer.value().set_env[0], (std::pair<std::string, std::string>{"M_GRAIN_WORKER_COUNT", "7"}));
  EXPECT_FALSE(WithValue({"train"}, site, 3, 7, "12").ok());         // rewritten since
  EXPECT_FALSE(WithValue({"train"}, site, 3, 7, std::nullopt).ok());  // not set at all
}

// The command is not the one the webhook described (a later admission rewrote the value, and its
// length with it): never write into it blind.
TEST(WithValueTest, APlaceThatDoesNotHoldAdmissionsValueIsAnError) {
  const std::vector<std::string> argv = {"train", "grain_worker_count=64"};
  const auto with = [&](size_t arg, size_t begin, size_t end, int written, int workers) {
    return WithValue(argv, {.arg = arg, .begin = begin, .end = end, .env_name = ""}, written, workers,
                     std::nullopt);
  };
  EXPECT_FALSE(with(1, 0, 5, 64, 9).ok());
  EXPECT_FALSE(with(1, 19, 40, 64, 9).ok());
  EXPECT_FALSE(with(2, 0, 1, 64, 9).ok());
  EXPECT_FALSE(with(1, 19, 21, 64, 0).ok());
  EXPECT_FALSE(with(1, 19, 20, 9, 5).ok());  // "9" rewritten to "64": the one-byte range holds "6"
  EXPECT_TRUE(with(1, 19, 21, 64, 9).ok());
}

TEST(ParseFlagsTest, ValueAtAndInsertions) {
  Result<ValueSite> site = ParseValueAt("2:25:27");
  ASSERT_TRUE(site.ok());
  EXPECT_EQ(site.value().arg, 2u);
  EXPECT_EQ(site.value().begin, 25u);
  EXPECT_EQ(site.value().end, 27u);
  for (const char* bad : {"", "2", "2:25", "2:27:25", "a:1:2", "1:2:3:4", "-1:2:3", "2:5:5"})
    EXPECT_FALSE(ParseValueAt(bad).ok()) << bad;
  EXPECT_EQ(ParseLapInsertion("6", false).value().arg, 6u);
  EXPECT_EQ(ParseLapInsertion("2:81", true).value().offset, 81u);
  EXPECT_FALSE(ParseLapInsertion("2:81", false).ok());
  EXPECT_FALSE(ParseLapInsertion("2", true).ok());
}

}  // namespace
}  // namespace graintune::launcher
