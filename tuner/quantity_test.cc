#include "tuner/quantity.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

TEST(QuantityTest, ParsesKubernetesForms) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("180"), 180);
  EXPECT_DOUBLE_EQ(*ParseQuantity("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseQuantity("2Gi"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*ParseQuantity("720G"), 720e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5Ki"), 1536);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1e3"), 1000);
  EXPECT_DOUBLE_EQ(*ParseQuantity(" 3 "), 3);
  EXPECT_DOUBLE_EQ(*ParseQuantity("+4"), 4);
  EXPECT_DOUBLE_EQ(*ParseQuantity("2E"), 2e18);
}

TEST(QuantityTest, RejectsMalformedWithMessage) {
  for (const char* bad : {"", "Gi", "2Gx", "1.2.3", "abc", "--1", "1e", "1e999999"}) {
    Result<double> r = ParseQuantity(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find("quantity"), std::string::npos) << r.error();
  }
  EXPECT_NE(ParseQuantity("2Gx").error().find("unknown suffix 'Gx'"), std::string::npos);
}

TEST(QuantityTest, NonNegativeNamesTheField) {
  Result<double> r = ParseNonNegativeQuantity("-2Gi", "graintune.dev/worker-memory");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("graintune.dev/worker-memory"), std::string::npos);
  EXPECT_TRUE(ParseNonNegativeQuantity("0", "x").ok());
}

TEST(QuantityTest, FiniteNumbers) {
  EXPECT_EQ(*ParseFiniteNumber("4.3"), 4.3);
  EXPECT_EQ(*ParseFiniteNumber("1e3"), 1000);
  EXPECT_EQ(*ParseFiniteNumber("-2"), -2);
  for (const char* bad : {"", " 4", "4 ", "2Gi", "inf", "nan", "1e999", "four"})
    EXPECT_FALSE(ParseFiniteNumber(bad)) << bad;
}

}  // namespace
}  // namespace graintune
