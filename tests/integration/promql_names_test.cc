#include "tests/integration/promql_names.h"

#include <gtest/gtest.h>

namespace graintune::testing {
namespace {

std::vector<std::string> Metrics(const PromqlNames& n) {
  std::vector<std::string> out;
  for (const VectorSelector& s : n.selectors) out.push_back(s.metric);
  return out;
}

TEST(PromqlNames, SelectorsMatchersAndGroupingLabels) {
  Result<PromqlNames> n = NamesInPromql(
      R"(histogram_quantile(0.99, sum by (le, kind) (rate(a_bucket{x="1", y=~"$v|b"}[$__rate_interval])))
         / on(kind) group_left(outcome) sum without (pod) (b_total offset 5m) > bool 0.5e-3)");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(Metrics(*n), (std::vector<std::string>{"a_bucket", "b_total"}));
  ASSERT_EQ(n->selectors[0].matchers.size(), 2u);
  EXPECT_EQ(n->selectors[0].matchers[1].label, "y");
  EXPECT_EQ(n->selectors[0].matchers[1].op, "=~");
  EXPECT_EQ(n->selectors[0].matchers[1].value, "$v|b");
  EXPECT_EQ(n->grouping_labels, (std::set<std::string>{"le", "kind", "outcome", "pod"}));
}

TEST(PromqlNames, AggregatorNamesAreNotMetricsButAMetricCalledLikeOneIs) {
  Result<PromqlNames> n = NamesInPromql("max by (a) (sum) + count(up) + sum");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(Metrics(*n), (std::vector<std::string>{"sum", "up", "sum"}));
}

TEST(PromqlNames, ASelectorWithoutAName) {
  Result<PromqlNames> n = NamesInPromql(R"({__name__="x", job!="y"})");
  ASSERT_TRUE(n.ok()) << n.error();
  ASSERT_EQ(n->selectors.size(), 1u);
  EXPECT_EQ(n->selectors[0].metric, "");
  EXPECT_EQ(n->selectors[0].matchers.size(), 2u);
}

TEST(PromqlNames, MalformedExpressionsAreErrors) {
  for (const char* bad : {"sum(x", "x{a=\"b}", "rate(x[5m)", "x{a=b}", "x ; y", "x{a=\"1\"}}"})
    EXPECT_FALSE(NamesInPromql(bad).ok()) << bad;
}

TEST(PromqlNames, GrafanaLabelValues) {
  Result<PromqlNames> n = NamesInVariableQuery(R"(label_values(m{ns=~"$a,b"}, graintuning))");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(Metrics(*n), (std::vector<std::string>{"m"}));
  EXPECT_EQ(n->grouping_labels, (std::set<std::string>{"graintuning"}));
  Result<PromqlNames> bare = NamesInVariableQuery("label_values(namespace)");
  ASSERT_TRUE(bare.ok()) << bare.error();
  EXPECT_TRUE(bare->selectors.empty());
  EXPECT_EQ(bare->grouping_labels, (std::set<std::string>{"namespace"}));
  EXPECT_FALSE(NamesInVariableQuery("label_values(m, a{b=\"c\"})").ok());
}

}  // namespace
}  // namespace graintune::testing
