#include "workload/mounted_config.h"

#include <gtest/gtest.h>

#include "workload/in_memory_sources.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

const json kSpec = json::parse(R"({"volumes": [{"name": "cfg", "configMap": {"name": "maxtext"}}]})");
const json kContainer = json::parse(R"({"volumeMounts": [{"name": "cfg", "mountPath": "/etc/maxtext"}]})");

TEST(MountedConfigTest, ABaseConfigChainInTheSameConfigMapIsFollowed) {
  InMemoryConfigMaps configmaps;
  configmaps.Put("ns", "maxtext", "run.yml", "base_config: team.yml\nrun_name: r1\n");
  configmaps.Put("ns", "maxtext", "team.yml",
                 "base_config: /etc/maxtext/org.yml\nrun_name: team\ndataset_type: grain\n");
  configmaps.Put("ns", "maxtext", "org.yml", "base_config: base.yml\nenable_checkpointing: false\n");
  Result<std::optional<ConfigValues>> v =
      LoadMountedConfig(kSpec, kContainer, "/etc/maxtext/run.yml", "ns", configmaps);
  ASSERT_TRUE(v.ok()) << v.error();
  ASSERT_TRUE(*v);
  EXPECT_EQ((**v)["run_name"], "r1");  // the child wins
  EXPECT_EQ((**v)["dataset_type"], "grain");
  EXPECT_EQ((**v)["enable_checkpointing"], "false");
  // org.yml's base.yml is not in the ConfigMap: MaxText's own, left for the reader.
  EXPECT_EQ((**v)["base_config"], "base.yml");
}

TEST(MountedConfigTest, ABaseOutsideTheConfigMapStaysNamedAndACycleEnds) {
  InMemoryConfigMaps configmaps;
  configmaps.Put("ns", "maxtext", "run.yml", "base_config: /app/team.yml\nrun_name: r1\n");
  Result<std::optional<ConfigValues>> v =
      LoadMountedConfig(kSpec, kContainer, "/etc/maxtext/run.yml", "ns", configmaps);
  ASSERT_TRUE(v.ok() && *v);
  EXPECT_EQ((**v)["base_config"], "/app/team.yml");
  configmaps.Put("ns", "maxtext", "a.yml", "base_config: b.yml\nx: 1\n");
  configmaps.Put("ns", "maxtext", "b.yml", "base_config: a.yml\ny: 2\n");
  v = LoadMountedConfig(kSpec, kContainer, "/etc/maxtext/a.yml", "ns", configmaps);
  ASSERT_TRUE(v.ok() && *v);
  EXPECT_EQ((**v)["x"], "1");
  EXPECT_EQ((**v)["y"], "2");
  EXPECT_TRUE((**v).count("base_config"));  // still unfollowed after kMaxConfigChain files
  // A base that does not parse is an error with the file named.
  configmaps.Put("ns", "maxtext", "bad.yml", "base_config: worse.yml\n");
  configmaps.Put("ns", "maxtext", "worse.yml", "[unclosed");
  v = LoadMountedConfig(kSpec, kContainer, "/etc/maxtext/bad.yml", "ns", configmaps);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().find("worse.yml"), std::string::npos) << v.error();
}

}  // namespace
}  // namespace graintune::workload
