#include "server/flags.h"

#include <gtest/gtest.h>

namespace graintune::server {
namespace {

TEST(FlagsTest, BothSpellingsAndPositionals) {
  Result<Flags> f = Flags::Parse({"a.yaml", "--workers", "4", "--output=json", "--dry"},
                                 {"workers", "output"}, {"dry"});
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(*f->Get("workers"), "4");
  EXPECT_EQ(*f->Get("output"), "json");
  EXPECT_TRUE(f->Bool("dry"));
  EXPECT_EQ(f->positional(), std::vector<std::string>{"a.yaml"});
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  EXPECT_EQ(Flags::Parse({"--wrokers", "4"}, {"workers"}).error(), "unknown flag --wrokers");
  EXPECT_EQ(Flags::Parse({"--workers"}, {"workers"}).error(), "flag --workers needs a value");
  Result<Flags> f = Flags::Parse({"--workers", "four", "--mem", "2Gx"}, {"workers", "mem"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Integer("workers").error(), "--workers: 'four' is not an integer");
  EXPECT_EQ(f->IntegerIn("mem", 1, 9).error(), "--mem wants an integer in [1, 9], got '2Gx'");
  EXPECT_EQ(f->Duration("mem").error(),
            "--mem wants a duration such as 45s, 30m, 720h or 30d, got '2Gx'");
  EXPECT_EQ(Flags::Parse({"--dry=yes"}, {}, {"dry"}).error(),
            "flag --dry takes no value (or =true / =false)");
}

TEST(FlagsTest, RepeatedValuesAndBooleanSpellings) {
  Result<Flags> f = Flags::Parse({"--ns", "a", "--ns=b", "--elect=false", "--port", "8443"},
                                 {"ns", "port"}, {"elect", "quiet"});
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f->All("ns"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*f->Get("ns"), "b");
  EXPECT_TRUE(f->Has("elect"));
  EXPECT_FALSE(f->Bool("elect"));
  EXPECT_FALSE(f->Bool("quiet"));
  EXPECT_EQ(**f->IntegerIn("port", 1, 65535), 8443);
  EXPECT_EQ(f->IntegerIn("port", 1, 1024).error(), "--port wants an integer in [1, 1024], got '8443'");
  EXPECT_TRUE(f->All("absent").empty());
}

using std::chrono::seconds;

TEST(FlagsTest, DurationsAreAWholeNumberAndOneUnit) {
  EXPECT_EQ(ParseDuration("0"), seconds(0));
  EXPECT_EQ(ParseDuration("45s"), seconds(45));
  EXPECT_EQ(ParseDuration("30m"), seconds(1800));
  EXPECT_EQ(ParseDuration("720h"), seconds(720 * 3600));
  EXPECT_EQ(ParseDuration("30d"), seconds(30 * 86400));
  for (const char* bad : {"", "h", "5", "1.5h", "-3h", "3w", "3 h", "h3", "99999999999999d", "3hh"})
    EXPECT_FALSE(ParseDuration(bad)) << bad;
}

}  // namespace
}  // namespace graintune::server
