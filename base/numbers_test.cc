#include "base/numbers.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

TEST(NumbersTest, WholeTextOrNothing) {
  EXPECT_EQ(ParseFiniteNumber("4.3"), 4.3);
  EXPECT_EQ(ParseFiniteNumber("1e3"), 1000);
  EXPECT_EQ(ParseFiniteNumber("-2"), -2);
  for (const char* bad : {"", " 1", "1 ", "1x", "inf", "nan", "1e999"})
    EXPECT_FALSE(ParseFiniteNumber(bad)) << bad;
  EXPECT_EQ(ParseInt("42"), 42);
  EXPECT_EQ(ParseInt("-1"), -1);
  for (const char* bad : {"", "4.0", "x", "99999999999", "+3", "3 "}) EXPECT_FALSE(ParseInt(bad)) << bad;
}

}  // namespace
}  // namespace graintune
