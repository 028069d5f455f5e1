#include "cli/default_policy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "workload/graintune_objects.h"
#include "workload/yaml_json.h"

namespace graintune::cli {
namespace {

// The CLI's default policy is the chart's: every defaultPolicy value of values.yaml.
TEST(DefaultPolicyTest, IsTheChartsDefaultPolicy) {
  std::ifstream file(GRAINTUNE_CHART_VALUES);
  ASSERT_TRUE(file) << GRAINTUNE_CHART_VALUES;
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<nlohmann::json>> docs = workload::ParseYamlDocuments(text.str());
  ASSERT_TRUE(docs.ok()) << docs.error();
  const nlohmann::json values = docs->at(0).at("defaultPolicy");
  const nlohmann::json spec = ChartDefaultPolicyObject().at("spec");
  size_t compared = 0;
  for (const auto& [key, value] : values.items()) {
    if (key == "enabled") continue;
    ASSERT_TRUE(spec.contains(key)) << "the chart's defaultPolicy." << key << " is not in the CLI's";
    EXPECT_EQ(spec.at(key), value) << key;
    ++compared;
  }
  EXPECT_EQ(compared + 1, spec.size()) << "priority plus every chart value";  // priority: 0 in the template

  Result<Policy> parsed = workload::PolicyFromObject(ChartDefaultPolicyObject());
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Policy policy = ChartDefaultPolicy();
  EXPECT_EQ(policy.max_workers, values.at("maxWorkers").get<int>());
  EXPECT_EQ(policy.min_workers, values.at("minWorkers").get<int>());
  EXPECT_DOUBLE_EQ(policy.safety_factor, values.at("safetyFactor").get<double>());
  EXPECT_EQ(ToString(policy.mode), values.at("mode").get<std::string>());
}

}  // namespace
}  // namespace graintune::cli
