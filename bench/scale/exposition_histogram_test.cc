#include "bench/scale/exposition_histogram.h"

#include <gtest/gtest.h>

#include <limits>

namespace graintune::bench {
namespace {

constexpr char kBefore[] = R"(# HELP x_seconds Time
# TYPE x_seconds histogram
x_seconds_bucket{name="a",operation="CREATE",le="0.005"} 10
x_seconds_bucket{name="a",operation="CREATE",le="0.1"} 10
x_seconds_bucket{name="a",operation="CREATE",le="+Inf"} 10
x_seconds_bucket{name="a",operation="UPDATE",le="0.005"} 5
x_seconds_bucket{name="a",operation="UPDATE",le="0.1"} 5
x_seconds_bucket{name="a",operation="UPDATE",le="+Inf"} 5
x_seconds_sum{name="a",operation="CREATE"} 0.02
x_seconds_count{name="a",operation="CREATE"} 10
)";

constexpr char kAfter[] = R"(x_seconds_bucket{name="a",operation="CREATE",le="0.005"} 60
x_seconds_bucket{name="a",operation="CREATE",le="0.1"} 105
x_seconds_bucket{name="a",operation="CREATE",le="+Inf"} 110
x_seconds_bucket{name="a",operation="UPDATE",le="0.005"} 5
x_seconds_bucket{name="a",operation="UPDATE",le="0.1"} 5
x_seconds_bucket{name="a",operation="UPDATE",le="+Inf"} 5
x_seconds_bucket{name="a",operation="CREATE",le="0.5" 7
x_seconds_bucket{role="x",name="a",operation="CREATE"} 9
x_seconds_bucket{name="a",operation="CREATE",le="0.7"} many
)";

TEST(ExpositionHistogramTest, QuantilesOfWhatWasObservedBetweenTwoReadings) {
  const HistogramReading before = ReadHistogram(kBefore, "x_seconds", {"operation=\"CREATE\""});
  const HistogramReading after = ReadHistogram(kAfter, "x_seconds", {"operation=\"CREATE\""});
  EXPECT_EQ(before.Count(), 10);
  const HistogramReading burst = after.Since(before);
  EXPECT_EQ(burst.Count(), 100);
  EXPECT_EQ(burst.QuantileBound(0.05), 0.005);  // role="x" holds no bucket bound
  EXPECT_EQ(burst.QuantileBound(0.5), 0.005);
  EXPECT_EQ(burst.QuantileBound(0.9), 0.1);
  EXPECT_EQ(burst.QuantileBound(0.99), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(burst.ShareUnder(0.1), 0.95);
  // Every series summed when no label part is asked for; unparseable lines are skipped.
  EXPECT_EQ(ReadHistogram(kAfter, "x_seconds").Count(), 115);
  EXPECT_EQ(ReadHistogram(kAfter, "y_seconds").Count(), 0);
  EXPECT_FALSE(ReadHistogram("", "x_seconds").QuantileBound(0.5).has_value());
}

// A labelled counter read by its label's values; a longer name sharing the prefix, a comment
// and another label are not read.
TEST(ExpositionHistogramTest, ACounterIsReadByItsLabel) {
  const std::string text =
      "# HELP shed_total Connections shed {reason=\"x\"}\n"
      "shed_total{reason=\"refused_full\"} 0\n"
      "shed_total{reason=\"reclaimed_for_room\"} 371\n"
      "shed_total_other{reason=\"refused_full\"} 9\n"
      "shed_total{kind=\"a\"} 5\n";
  const std::map<std::string, double> shed = ReadCounterByLabel(text, "shed_total", "reason");
  EXPECT_EQ(shed, (std::map<std::string, double>{{"reclaimed_for_room", 371}, {"refused_full", 0}}));
  EXPECT_TRUE(ReadCounterByLabel("", "shed_total", "reason").empty());
}

}  // namespace
}  // namespace graintune::bench
