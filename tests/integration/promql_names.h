// The metric and label names a PromQL expression refers to, for tests that hold the chart's
// queries (dashboard, alerts) against what graintune's binaries export.
//
// A small reader, not a PromQL parser: it tokenises the expression (identifiers, strings,
// numbers, punctuation), skips range and subquery brackets ([5m], [$__rate_interval]) and
// function and aggregation names (an identifier followed by "(", or an aggregator followed by
// by/without), and reports
//   - each vector selector: its metric name and its label matchers (label, operator, value);
//   - each label named by by / without / on / ignoring / group_left / group_right.
// A `{...}` selector without a metric name is reported with an empty metric. Errors: an
// unterminated string, an unbalanced bracket, or a character PromQL does not have. Pure.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graintune::testing {

struct LabelMatcher {
  std::string label;
  std::string op;     // = != =~ !~
  std::string value;  // unquoted
};

struct VectorSelector {
  std::string metric;
  std::vector<LabelMatcher> matchers;
};

struct PromqlNames {
  std::vector<VectorSelector> selectors;
  std::set<std::string> grouping_labels;
};

Result<PromqlNames> NamesInPromql(std::string_view expr);

// A Grafana query variable `label_values(SELECTOR, LABEL)` (or `label_values(LABEL)`): the
// names of SELECTOR, with LABEL among the grouping labels. Other variable queries are read as
// PromQL.
Result<PromqlNames> NamesInVariableQuery(std::string_view query);

}  // namespace graintune::testing
