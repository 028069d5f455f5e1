#include "webhook/command_line.h"

#include <gtest/gtest.h>

namespace graintune::webhook {
namespace {

using std::chrono::seconds;

TEST(CommandLineTest, DurationsAreAWholeNumberAndOneUnit) {
  EXPECT_EQ(ParseDuration("0"), seconds(0));
  EXPECT_EQ(ParseDuration("45s"), seconds(45));
  EXPECT_EQ(ParseDuration("30m"), seconds(1800));
  EXPECT_EQ(ParseDuration("720h"), seconds(720 * 3600));
  EXPECT_EQ(ParseDuration("30d"), seconds(30 * 86400));
  for (const char* bad : {"", "h", "5", "1.5h", "-3h", "3w", "3 h", "h3", "99999999999999d", "3hh"})
    EXPECT_FALSE(ParseDuration(bad)) << bad;
}

}  // namespace
}  // namespace graintune::webhook
