#include "contract/launcher_flags.h"

#include <gtest/gtest.h>

#include <set>

namespace graintune::contract {
namespace {

TEST(LauncherFlagsTest, EveryFlagIsDeclaredOnceWithItsOwnName) {
  std::set<LauncherFlag> flags;
  std::set<std::string_view> names;
  for (const LauncherFlagSpec& spec : LauncherFlagSpecs()) {
    EXPECT_TRUE(flags.insert(spec.flag).second) << spec.name;
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_FALSE(spec.value_name.empty()) << spec.name;  // every launcher flag takes a value
    EXPECT_EQ(NameOf(spec.flag), spec.name);
  }
  EXPECT_EQ(flags.size(), static_cast<size_t>(LauncherFlag::kStartCheckFill) + 1);
}

TEST(LauncherFlagsTest, WordsAreReadBackOnlyBeforeTheTrainersCommand) {
  const std::vector<std::string> command = {
      "/graintune-launcher/graintune-launcher", LauncherSecondsWord(LauncherFlag::kAnswerWait, 90),
      LauncherWord(LauncherFlag::kAnswerFile, "/graintune-lap/value"), "--",
      "python3", "--lap-steps=7", "--answer-file=/elsewhere"};
  EXPECT_EQ(command[1], "--answer-wait=90s");
  EXPECT_EQ(LauncherSecondsValue(command, LauncherFlag::kAnswerWait), 90);
  EXPECT_EQ(LauncherFlagValue(command, LauncherFlag::kAnswerFile), "/graintune-lap/value");
  EXPECT_EQ(LauncherFlagValue(command, LauncherFlag::kLapSteps), std::nullopt);  // the trainer's word
  EXPECT_TRUE(IsLauncherWord(command[1], LauncherFlag::kAnswerWait));
  EXPECT_FALSE(IsLauncherWord(command[1], LauncherFlag::kAnswerFile));
}

TEST(LauncherFlagsTest, ADurationInAnotherFormIsNotReadAsSeconds) {
  for (const std::string word : {"--answer-wait=90", "--answer-wait=2m", "--answer-wait=s", "--answer-wait=-5s",
                                 "--answer-wait=1.5s", "--answer-wait=99999999999s"})
    EXPECT_EQ(LauncherSecondsValue({"graintune-launcher", word, "--"}, LauncherFlag::kAnswerWait), std::nullopt)
        << word;
}

}  // namespace
}  // namespace graintune::contract
