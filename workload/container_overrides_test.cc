#include "workload/container_overrides.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

using json = nlohmann::json;

TEST(ContainerOverridesTest, ArgsScriptsAndEnv) {
  json c = json::parse(R"({
    "name": "jax-tpu",
    "command": ["bash", "-c", "echo start && python3 -m MaxText.train MaxText/configs/base.yml run_name=r1 grain_worker_count=-1 per_device_batch_size=2"],
    "env": [{"name": "M_MAX_TARGET_LENGTH", "value": "8192"}, {"name": "HOME", "value": "/"}]
  })");
  ContainerOverrides o = ScanContainer(c);
  EXPECT_TRUE(o.invokes_maxtext);
  EXPECT_EQ(*o.Value("grain_worker_count"), "-1");
  EXPECT_EQ(*o.Value("per_device_batch_size"), "2");
  EXPECT_EQ(*o.Value("max_target_length"), "8192");
  ASSERT_TRUE(o.config);
  EXPECT_EQ(o.config->path, "MaxText/configs/base.yml");
  EXPECT_EQ(o.config->location, OverrideLocation::kScript);
  for (const Override& ov : o.overrides) {
    if (ov.key != "grain_worker_count") continue;
    EXPECT_EQ(ov.pointer, "/command/2");
    EXPECT_EQ(c["command"][2].get<std::string>().substr(ov.value_begin, 2), "-1");
  }
}

TEST(ContainerOverridesTest, PlainArgvAndShellFlagVariants) {
  json c = json::parse(R"({"command": ["python3", "-m", "MaxText.train"],
                          "args": ["/cfg/x.yaml", "grain_worker_count_eval=-1"]})");
  ContainerOverrides o = ScanContainer(c);
  ASSERT_TRUE(o.config);
  EXPECT_EQ(o.config->pointer, "/args/0");
  EXPECT_EQ(o.overrides.at(0).pointer, "/args/1");
  json sh = json::parse(R"({"command": ["/bin/sh", "-ec"], "args": ["train grain_worker_count=-1"]})");
  EXPECT_EQ(ScanContainer(sh).overrides.at(0).location, OverrideLocation::kScript);
}

TEST(ContainerOverridesTest, EnvNames) {
  EXPECT_EQ(MaxTextKeyFromEnv("M_GRAIN_WORKER_COUNT"), "grain_worker_count");
  EXPECT_EQ(MaxTextKeyFromEnv("M_"), "");
  EXPECT_EQ(MaxTextKeyFromEnv("M_lower"), "");
  EXPECT_EQ(MaxTextKeyFromEnv("PATH"), "");
  EXPECT_EQ(EnvNameForKey("grain_worker_count_eval"), "M_GRAIN_WORKER_COUNT_EVAL");
}

TEST(ContainerOverridesTest, MalformedContainersYieldNothing) {
  EXPECT_TRUE(ScanContainer(json::parse(R"({"args": [1, null, {"a": 2}], "env": [3, {"name": 4}]})"))
                  .overrides.empty());
  EXPECT_TRUE(ScanContainer(json::array()).overrides.empty());
  EXPECT_TRUE(ScanContainer(json::parse(R"({"command": ["bash", "-c"]})")).overrides.empty());
}

}  // namespace
}  // namespace graintune::workload
