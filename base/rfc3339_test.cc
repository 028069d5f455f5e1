#include "base/rfc3339.h"

#include <gtest/gtest.h>

#include "base/fake_clock.h"

namespace graintune {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST(Rfc3339Test, FormatsWholeSecondsAndMicroseconds) {
  const Clock::WallTime t = Clock::WallTime(seconds(1796018400)) + microseconds(487759);
  EXPECT_EQ(FormatRfc3339(t), "2026-11-30T06:00:00Z");
  EXPECT_EQ(FormatRfc3339Micros(t), "2026-11-30T06:00:00.487759Z");
  EXPECT_EQ(FormatRfc3339Micros(Clock::WallTime(seconds(1796018400))), "2026-11-30T06:00:00.000000Z");
}

TEST(Rfc3339Test, ParsesWhatItFormatsAndRefusesOtherText) {
  const Clock::WallTime t = Clock::WallTime(seconds(1796018400)) + microseconds(5);
  EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), 1796018400);
  EXPECT_EQ(ParseRfc3339(FormatRfc3339Micros(t)), 1796018400);
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  for (const char* bad : {"", "2026-11-30", "2026-11-30T06:00:00", "2026-11-30T06:00:00+01:00",
                          "2026-11-30T06:00:00Zjunk", "2026-11-30T06:00:00.Q", "yesterday"})
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
}

TEST(FakeClockTest, MovesSteadyAndWallTimeTogetherOnlyWhenAdvanced) {
  FakeClock clock;
  const Clock::SteadyTime steady = clock.SteadyNow();
  EXPECT_EQ(FormatRfc3339(clock.WallNow()), "2026-11-30T06:00:00Z");
  EXPECT_EQ(clock.SteadyNow(), steady);
  clock.Advance(seconds(90));
  EXPECT_EQ(clock.SteadyNow() - steady, seconds(90));
  EXPECT_EQ(FormatRfc3339(clock.WallNow()), "2026-11-30T06:01:30Z");
}

TEST(RealClockTest, ReadsTheMachineClocks) {
  const auto before = std::chrono::system_clock::now();
  const Clock::WallTime wall = RealClock().WallNow();
  EXPECT_GE(wall, before);
  EXPECT_LE(wall, std::chrono::system_clock::now());
  const Clock::SteadyTime a = RealClock().SteadyNow();
  EXPECT_LE(a, RealClock().SteadyNow());
}

}  // namespace
}  // namespace graintune
