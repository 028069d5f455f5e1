#include "cli/flags.h"

#include <gtest/gtest.h>

namespace graintune::cli {
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
  EXPECT_NE(f->Quantity("mem").error().find("--mem"), std::string::npos);
}

}  // namespace
}  // namespace graintune::cli
