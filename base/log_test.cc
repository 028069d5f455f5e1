#include "base/log.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

TEST(LogTest, LevelsParseAndGate) {
  for (const char* name : {"error", "warning", "info", "debug"}) {
    Result<LogLevel> l = ParseLogLevel(name);
    ASSERT_TRUE(l.ok()) << name;
    EXPECT_EQ(ToString(*l), name);
  }
  Result<LogLevel> bad = ParseLogLevel("verbose");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("want error, warning, info or debug"), std::string::npos);

  SetLogLevel(LogLevel::kWarning);
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
  testing::internal::CaptureStderr();
  SetLogProgram("graintune-test");
  Log(LogLevel::kInfo, "not shown");
  Log(LogLevel::kError, "shown");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "error graintune-test: shown\n");
  SetLogLevel(LogLevel::kInfo);
}

}  // namespace
}  // namespace graintune
