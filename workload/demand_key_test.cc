#include "workload/demand_key.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

HostShape V6eHost() {
  HostShape h;
  h.cpu_cores = 180;
  h.memory_bytes = 720e9;
  h.tpu_chips = 4;
  h.generation = ChipGeneration::kV6e;
  h.machine_type = "ct6e-standard-4t";
  return h;
}

const std::map<std::string, std::string> kLlama = {
    {"model_name", "llama3-8b"}, {"per_device_batch_size", "4"}, {"max_target_length", "8192"},
    {"remat_policy", "full"},    {"run_name", "llama-run-1"},     {"grain_worker_count", "9"}};

TEST(DemandKeyTest, NamesTheModelBatchSequenceChipsAndMachineType) {
  const std::string key = DemandKey(kLlama, "MaxText/configs/base.yml", 4, V6eHost());
  EXPECT_EQ(key.substr(0, key.find(", settings ")),
            "llama3-8b batch 4 seq 8192, 4x v6e on ct6e-standard-4t");
  EXPECT_EQ(key.size(), key.find(", settings ") + 11 + 16) << key;  // a 16-digit hash ends it
}

TEST(DemandKeyTest, AnotherRunOfTheSameTrainingStepHasTheSameKey) {
  // Another run name, output directory, dataset, worker count, step count or checkpointing:
  // the chips compute the same step.
  std::map<std::string, std::string> other = kLlama;
  other["run_name"] = "llama-run-2";
  other["base_output_directory"] = "gs://bucket/out";
  other["dataset_path"] = "gs://corpus/pile";
  other["grain_worker_count"] = "24";
  other["grain_train_files"] = "/data/*.arrayrecord";
  other["steps"] = "100000";
  other["enable_checkpointing"] = "true";
  other["eval_interval"] = "500";
  EXPECT_EQ(DemandKey(kLlama, "base.yml", 4, V6eHost()), DemandKey(other, "base.yml", 4, V6eHost()));
}

TEST(DemandKeyTest, AnythingThatMayChangeTheStepChangesTheKey) {
  const std::string key = DemandKey(kLlama, "base.yml", 4, V6eHost());
  auto with = [&](const std::string& k, const std::string& v) {
    std::map<std::string, std::string> s = kLlama;
    s[k] = v;
    return DemandKey(s, "base.yml", 4, V6eHost());
  };
  EXPECT_NE(with("per_device_batch_size", "8"), key);
  EXPECT_NE(with("max_target_length", "4096"), key);
  EXPECT_NE(with("model_name", "llama3-70b"), key);
  EXPECT_NE(with("remat_policy", "minimal"), key);
  EXPECT_NE(with("quantization", "int8"), key);
  // A setting graintune has never heard of keeps workloads apart too.
  EXPECT_NE(with("some_future_setting", "on"), key);
  EXPECT_NE(DemandKey(kLlama, "models/llama.yml", 4, V6eHost()), key);
  EXPECT_NE(DemandKey(kLlama, "base.yml", 8, V6eHost()), key);
  HostShape v5e = V6eHost();
  v5e.machine_type = "ct5lp-hightpu-4t";
  v5e.generation = ChipGeneration::kV5e;
  EXPECT_NE(DemandKey(kLlama, "base.yml", 4, v5e), key);
}

TEST(DemandKeyTest, AHostOfUnknownKindTransfersNothing) {
  HostShape unknown = V6eHost();
  unknown.machine_type = "";
  EXPECT_EQ(DemandKey(kLlama, "base.yml", 4, unknown), "");
}

TEST(DemandKeyTest, HostileSizesStayBounded) {
  std::map<std::string, std::string> s = kLlama;
  s["model_name"] = std::string(100000, 'x');
  s[std::string(5000, 'k')] = std::string(100000, 'v');
  const std::string key = DemandKey(s, std::string(10000, 'p'), 4, V6eHost());
  EXPECT_LT(key.size(), 512u) << "the CRD caps demandKey at 512";
  HostShape long_type = V6eHost();
  long_type.machine_type = std::string(1000, 'm');
  EXPECT_EQ(DemandKey(kLlama, "", 4, long_type), "");
}

TEST(DemandKeyTest, KnowsWhichSettingsLeaveTheStepAlone) {
  EXPECT_TRUE(LeavesTheStepAlone("run_name"));
  EXPECT_TRUE(LeavesTheStepAlone("grain_worker_count"));
  EXPECT_TRUE(LeavesTheStepAlone("eval_per_device_batch_size"));
  EXPECT_FALSE(LeavesTheStepAlone("remat_policy"));
  EXPECT_FALSE(LeavesTheStepAlone("gradient_accumulation_steps"));
  EXPECT_FALSE(LeavesTheStepAlone("ici_fsdp_parallelism"));
}

}  // namespace
}  // namespace graintune::workload
