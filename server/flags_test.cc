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

const std::vector<FlagSpec> kSpecs = {
    {.name = "port", .value_name = "N", .default_text = "8443", .help = "the port", .required = true},
    {.name = "exclude-namespace", .value_name = "NS", .help = "never touched", .repeated = true},
    {.name = "leader-elect", .default_text = "true", .help = "elect a leader"},
    {.name = "standalone", .help = "no API server"}};

TEST(FlagsTest, DeclaredFlagsParseAndFallBackToTheirDefaults) {
  Result<Flags> f = Flags::ParseDeclared({"--exclude-namespace", "a", "--standalone"}, kSpecs);
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(**f->IntegerIn("port", 1, 65535), 8443);  // the declared default
  EXPECT_FALSE(f->Has("port"));
  EXPECT_TRUE(f->Bool("leader-elect"));
  EXPECT_TRUE(f->Bool("standalone"));
  EXPECT_EQ(f->All("exclude-namespace"), std::vector<std::string>{"a"});
  Result<Flags> given = Flags::ParseDeclared({"--port=9443", "--leader-elect=false"}, kSpecs);
  ASSERT_TRUE(given.ok()) << given.error();
  EXPECT_EQ(**given->IntegerIn("port", 1, 65535), 9443);
  EXPECT_FALSE(given->Bool("leader-elect"));
  EXPECT_FALSE(given->Bool("standalone"));
  EXPECT_EQ(Flags::ParseDeclared({"--prot", "1"}, kSpecs).error(), "unknown flag --prot");
  EXPECT_EQ(Flags::ParseDeclared({"--standalone=maybe"}, kSpecs).error(),
            "flag --standalone takes no value (or =true / =false)");
}

TEST(FlagsTest, UsageTextListsEveryDeclaredFlagOnceWithItsDefault) {
  const std::string usage = UsageText({.program = "graintune-test", .summary = "a test server.", .flags = kSpecs});
  EXPECT_EQ(usage.rfind("graintune-test: a test server.\n\nusage:\n  graintune-test --port N "
                        "[--exclude-namespace NS]... [--leader-elect] [--standalone]",
                        0),
            0u)
      << usage;
  // The help column starts two spaces after the longest flag, --log-level's (36 characters).
  for (const std::string& line : {"  --port N" + std::string(30, ' ') + "the port (default: 8443)\n",
                                  "  --standalone" + std::string(26, ' ') + "no API server\n",
                                  std::string("  --log-level error|warning|info|debug  what is logged")})
    EXPECT_NE(usage.find(line), std::string::npos) << line << "\nin:\n" << usage;
  // A long synopsis wraps under the first flag, within 100 columns.
  std::vector<FlagSpec> many;
  for (int i = 0; i < 20; ++i) many.push_back({.name = "flag-" + std::to_string(i), .value_name = "N"});
  const std::string wrapped = UsageText({.program = "p", .summary = "s.", .flags = many});
  const std::string synopsis = wrapped.substr(0, wrapped.find("\n\nflags:"));
  size_t start = 0;
  for (size_t end; (end = synopsis.find('\n', start)) != std::string::npos || start < synopsis.size();
       start = end + 1) {
    if (end == std::string::npos) end = synopsis.size();
    EXPECT_LE(end - start, 100u) << synopsis.substr(start, end - start);
  }
  EXPECT_NE(synopsis.find("\n    [--flag-"), std::string::npos) << synopsis;
}

}  // namespace
}  // namespace graintune::server
