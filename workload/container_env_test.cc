#include "workload/container_env.h"

#include <gtest/gtest.h>

#include "workload/in_memory_sources.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

TEST(ContainerEnvTest, ResolvesLiteralsConfigMapsAndTheJobSetName) {
  InMemoryConfigMaps configmaps;
  configmaps.Put("ns", "run", "RUN_NAME", "r9");
  configmaps.Put("ns", "flags", "CKPT", "False");
  configmaps.Put("ns", "flags", "ARGS", "dataset_type=grain");
  const json c = json::parse(R"({"envFrom": [{"configMapRef": {"name": "flags"}, "prefix": "P_"}],
    "env": [{"name": "A", "value": "1"},
            {"name": "RUN", "valueFrom": {"configMapKeyRef": {"name": "run", "key": "RUN_NAME"}}},
            {"name": "JOBSET_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"}}},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "REF", "value": "$(A)/x"},
            {"name": "A", "value": "2"}]})");
  const ContainerEnv env = ResolveContainerEnv(c, "ns", &configmaps, "js");
  EXPECT_EQ(env.Find("A")->value, "2");  // the later entry wins
  EXPECT_EQ(env.Find("A")->pointer, "/env/6/value");
  EXPECT_EQ(env.Find("RUN")->value, "r9");
  EXPECT_EQ(env.Find("RUN")->pointer, "");
  EXPECT_EQ(env.Find("JOBSET_NAME")->value, "js");
  EXPECT_EQ(env.Find("P_CKPT")->value, "False");
  EXPECT_EQ(env.Find("P_ARGS")->value, "dataset_type=grain");
  EXPECT_EQ(env.Find("POD")->value, std::nullopt);
  EXPECT_EQ(env.Find("TOKEN")->value, std::nullopt);
  // The kubelet expands $(A) from the entries before REF (A=1, not the later A=2); a value
  // that is not the written text has no pointer to edit.
  EXPECT_EQ(env.Find("REF")->value, "1/x");
  EXPECT_EQ(env.Find("REF")->pointer, "");
  EXPECT_FALSE(env.may_set_any);
  // Without sources, references are set to something unknown.
  EXPECT_EQ(ResolveContainerEnv(c, "ns", nullptr, "").Find("RUN")->value, std::nullopt);
}

// A reference to a variable whose value is unknown is unknown; a reference to one that is not
// defined stays as written, and $$ is a literal $, as the kubelet does.
TEST(ContainerEnvTest, ReferencesFollowTheKubeletsExpansion) {
  const json c = json::parse(R"J({"env": [
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "DIR", "value": "gs://b/$(POD)"},
            {"name": "LATER", "value": "$(NOT_YET)-$$(POD)-$(UNDEFINED)"},
            {"name": "NOT_YET", "value": "x"}]})J");
  const ContainerEnv env = ResolveContainerEnv(c, "ns", nullptr, "");
  EXPECT_EQ(env.Find("DIR")->value, std::nullopt);
  EXPECT_EQ(env.Find("LATER")->value, "$(NOT_YET)-$(POD)-$(UNDEFINED)");
  EXPECT_EQ(env.Find("NOT_YET")->value, "x");
}

TEST(ContainerEnvTest, WhatCannotBeReadIsUnknownNeverAnError) {
  InMemoryConfigMaps configmaps;
  const json c = json::parse(R"({"envFrom": [{"secretRef": {"name": "s"}}],
    "env": [{"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k", "optional": true}}},
            {"name": "REQ", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k"}}},
            {"name": "EMPTY"}, 7, {"name": 3}]})");
  ContainerEnv env = ResolveContainerEnv(c, "ns", &configmaps, "");
  EXPECT_TRUE(env.may_set_any);
  EXPECT_NE(env.may_set_any_why.find("Secret"), std::string::npos);
  EXPECT_EQ(env.Find("OPT"), nullptr);
  EXPECT_EQ(env.Find("REQ")->value, std::nullopt);
  EXPECT_EQ(env.Find("EMPTY")->value, "");
  configmaps.FailWithForTest("apiserver down");
  const json from_cm = json::parse(R"({"envFrom": [{"configMapRef": {"name": "x"}}]})");
  env = ResolveContainerEnv(from_cm, "ns", &configmaps, "");
  EXPECT_TRUE(env.may_set_any);
  EXPECT_NE(env.may_set_any_why.find("apiserver down"), std::string::npos);
  EXPECT_TRUE(ResolveContainerEnv(json::array(), "ns", &configmaps, "").variables.empty());
}

}  // namespace
}  // namespace graintune::workload
