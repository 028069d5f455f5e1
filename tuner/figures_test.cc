#include "tuner/figures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace graintune {
namespace {

std::string Printf(double value, int digits) {
  char buf[400];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

// Fixed formats as printf's %.*f does, ties and all (2.5 -> "2", 0.125 -> "0.12").
TEST(FiguresTest, FixedMatchesPrintf) {
  const double values[] = {0, -0.0, 2.5, 3.5, 0.125, 1.25, 0.1 + 0.2, -3.14159, 15234.4999,
                           1e20, 1e-7, 123456789.987654321, std::numeric_limits<double>::max()};
  for (double v : values)
    for (int digits : {0, 1, 2, 3, 6}) EXPECT_EQ(Fixed(v, digits), Printf(v, digits)) << v << " " << digits;
}

TEST(FiguresTest, CompactAndBytes) {
  EXPECT_EQ(Compact(15234), "15.2k");
  EXPECT_EQ(Compact(2.1e6), "2.1M");
  EXPECT_EQ(Compact(9), "9");
  EXPECT_EQ(Compact(0.25), "0.25");
  EXPECT_EQ(Bytes(2.0 * 1024 * 1024 * 1024), "2.0 GiB");
  EXPECT_EQ(Bytes(316.4 * 1024 * 1024), "316 MiB");
}

}  // namespace
}  // namespace graintune
