#include "contract/lap_answer_text.h"

#include <gtest/gtest.h>

namespace graintune::contract {
namespace {

TEST(LapAnswerTextTest, ACountNoneOrNothingYet) {
  EXPECT_FALSE(ParseLapAnswerText("").value().decided);
  EXPECT_FALSE(ParseLapAnswerText("\n").value().decided);
  Result<LapAnswerText> count = ParseLapAnswerText("9\n");
  ASSERT_TRUE(count.ok());
  EXPECT_TRUE(count.value().decided);
  EXPECT_EQ(count.value().workers, 9);
  Result<LapAnswerText> none = ParseLapAnswerText("none: host tiny-1 was OOM-killed");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value().decided);
  EXPECT_FALSE(none.value().workers);
  EXPECT_EQ(none.value().why, "host tiny-1 was OOM-killed");
  for (const char* bad : {"0", "-3", "+3", "09", "nine", "1e3", "9999999999", "12 workers", " 9"})
    EXPECT_FALSE(ParseLapAnswerText(bad).ok()) << bad;
}

TEST(LapAnswerTextTest, WhatIsFormattedParsesBackToTheSameAnswer) {
  for (int workers : {1, 7, 64, 1024}) {
    Result<LapAnswerText> back = ParseLapAnswerText(FormatLapValue(workers));
    ASSERT_TRUE(back.ok()) << workers;
    EXPECT_EQ(back.value().workers, workers);
  }
  for (const std::string why : {"attempt 2 continues its run", "host a: its lap failed: OOM", ""}) {
    Result<LapAnswerText> back = ParseLapAnswerText(FormatNoLapValue(why));
    ASSERT_TRUE(back.ok()) << why;
    EXPECT_TRUE(back.value().decided);
    EXPECT_FALSE(back.value().workers);
    EXPECT_EQ(back.value().why, why);
  }
}

}  // namespace
}  // namespace graintune::contract
