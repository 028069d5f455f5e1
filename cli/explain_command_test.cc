#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"

namespace graintune::cli {
namespace {

using nlohmann::json;

json Explain(const std::string& example) {
  std::ostringstream out, err;
  const int code = RunExplain({std::string(GRAINTUNE_EXAMPLES_DIR) + "/" + example, "--output", "json"},
                              out, err);
  EXPECT_EQ(code, 0) << err.str();
  return code == 0 ? json::parse(out.str()) : json::array();
}

TEST(ExplainCommandTest, SeedJobSetKeepsMinusOneAndNamesTheFirstAttempt) {
  json report = Explain("llama3-8b-v6e-32-jobset.yaml");
  ASSERT_EQ(report.size(), 1u);
  const json& e = report[0];
  EXPECT_EQ(e["object"], "JobSet default/llama3-8b-v6e-32");
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "script");
  EXPECT_EQ(e["found"][0]["before"], "-1");
  EXPECT_GT(e["workers"].get<int>(), 4);  // the seed: 4 workers starve a v6e host
  // The patch only annotates (the JobSet, and its pod template with the dataset name for the
  // operator): the spec keeps -1 for every restart.
  for (const json& op : e["patch"]) {
    const std::string path = op["path"];
    EXPECT_NE(path.find("/metadata"), std::string::npos) << op;
    EXPECT_EQ(path.find("/spec/containers"), std::string::npos) << op;
  }
  EXPECT_EQ(e["host"]["tpu_chips"], 4);
}

TEST(ExplainCommandTest, ConfigMapConfigGetsInjectedOverridesForTrainAndEval) {
  json report = Explain("v5e-job-configmap.yaml");
  ASSERT_EQ(report.size(), 1u);
  const json& e = report[0];
  ASSERT_EQ(e["found"].size(), 2u);
  EXPECT_EQ(e["found"][0]["where"], "configmap");
  // Annotated profile: 3k tok/s/worker; eval gets a quarter.
  EXPECT_EQ(e["eval_workers"].get<int>(), (e["workers"].get<int>() + 3) / 4);
  std::set<std::string> added;
  for (const json& op : e["patch"])
    if (op["path"].get<std::string>().find("/args/") != std::string::npos) added.insert(op["value"].get<std::string>());
  EXPECT_TRUE(added.count("grain_worker_count=" + std::to_string(e["workers"].get<int>())));
}

TEST(ExplainCommandTest, EnvOverrideIsRewrittenInPlace) {
  json e = Explain("v5p-job-env.yaml")[0];
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "env");
  bool env_replaced = false;
  for (const json& op : e["patch"]) {
    if (op["path"] == "/spec/template/spec/containers/0/env/0/value") {
      env_replaced = op["op"] == "replace" && op["value"] == std::to_string(e["workers"].get<int>());
    }
    EXPECT_EQ(op["path"].get<std::string>().find("/args"), std::string::npos) << "no argv twin";
  }
  EXPECT_TRUE(env_replaced);
}

TEST(ExplainCommandTest, AnnotationOnlyInjectsEnv) {
  json e = Explain("annotation-only-pod.yaml")[0];
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "annotation");
  bool added = false;
  for (const json& op : e["patch"])
    added = added || (op["path"] == "/spec/containers/0/env" && op["value"][0]["name"] == "M_GRAIN_WORKER_COUNT");
  EXPECT_TRUE(added) << e["patch"];
}

TEST(ExplainCommandTest, BadFilesAreClearErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain({"/nonexistent.yaml"}, out, err), 2);
  EXPECT_NE(err.str().find("cannot read"), std::string::npos);
  EXPECT_EQ(RunExplain({}, out, err), 2);
  EXPECT_EQ(RunExplain({std::string(GRAINTUNE_EXAMPLES_DIR) + "/v5p-job-env.yaml", "--machine-type", "x"}, out, err), 2);
}

}  // namespace
}  // namespace graintune::cli
