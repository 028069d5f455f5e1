#include "cli/tuning_flags.h"

#include <gtest/gtest.h>

namespace graintune::cli {
namespace {

TEST(TuningFlagsTest, QuantityFlagsNameTheFlag) {
  Result<server::Flags> f = server::Flags::Parse({"--mem", "2Gx", "--ok", "2Gi"}, {"mem", "ok"});
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_NE(QuantityFlag(*f, "mem").error().find("--mem"), std::string::npos);
  EXPECT_EQ(**QuantityFlag(*f, "ok"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_FALSE(*QuantityFlag(*f, "absent"));
}

}  // namespace
}  // namespace graintune::cli
