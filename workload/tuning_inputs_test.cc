#include "workload/tuning_inputs.h"

#include <gtest/gtest.h>

#include "workload/in_memory_sources.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

// A pod as the webhook leaves it: MaxText's container after a sidecar-like init container,
// its config mounted from a ConfigMap, graintune's value in argv.
json TunedPod() {
  return json::parse(R"({
    "metadata": {"name": "llama-0", "namespace": "team-a",
                 "labels": {"graintune.dev/managed": "true"},
                 "annotations": {"graintune.dev/worker-count": "9",
                                 "graintune.dev/dataset-kind": "heavy-decode"}},
    "spec": {
      "nodeSelector": {"node.kubernetes.io/instance-type": "ct6e-standard-4t"},
      "volumes": [{"name": "cfg", "configMap": {"name": "maxtext"}}],
      "initContainers": [{"name": "setup", "command": ["sh", "-c", "true"]}],
      "containers": [{"name": "jax-tpu",
        "command": ["python3", "-m", "MaxText.train", "/etc/maxtext/base.yml",
                    "grain_worker_count=9"],
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/maxtext"}],
        "resources": {"limits": {"google.com/tpu": 4}}}]}})");
}

class ReadPodTuningInputsTest : public ::testing::Test {
 protected:
  Result<TuningInputs> Read(const json& pod) {
    warnings_.clear();
    return ReadPodTuningInputs(pod, "team-a", PodInputSources{shapes_, configmaps_, policies_},
                               warnings_);
  }
  MachineTypeTableShapes shapes_;
  InMemoryConfigMaps configmaps_;
  FixedPolicy policies_{[] {
    Policy p;
    p.name = "GrainTunePolicy team-llm";
    p.object_name = "team-llm";
    p.max_workers = 40;
    return p;
  }()};
  std::vector<std::string> warnings_;
};

TEST_F(ReadPodTuningInputsTest, ReadsTheMaxTextContainerItsConfigAndThePolicyByName) {
  configmaps_.Put("team-a", "maxtext", "base.yml",
                  "model_name: llama3-8b\nper_device_batch_size: 2\nmax_target_length: 8192\n");
  Result<TuningInputs> in = Read(TunedPod());
  ASSERT_TRUE(in.ok()) << in.error();
  EXPECT_EQ(in->host.machine_type, "ct6e-standard-4t");
  EXPECT_EQ(in->policy.object_name, "team-llm");
  EXPECT_EQ(in->policy.max_workers, 40);
  EXPECT_EQ(in->profile.kind, DatasetKind::kHeavyDecode);  // from the pod's annotation
  // llama3-8b at 2 x 8192 tokens per chip, 4 chips: the mounted config was read.
  EXPECT_DOUBLE_EQ(in->demand.tokens_per_step_per_host, 2.0 * 8192 * 4);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ReadPodTuningInputsTest, AnUnreadableConfigIsAWarningAndDefaultsAreUsed) {
  configmaps_.FailWithForTest("cache not synced");
  Result<TuningInputs> in = Read(TunedPod());
  ASSERT_TRUE(in.ok()) << in.error();
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("cache not synced"), std::string::npos);
}

TEST_F(ReadPodTuningInputsTest, NoMaxTextContainerOrNoHostIsAnError) {
  json pod = TunedPod();
  pod["spec"]["containers"][0]["command"] = {"python3", "train.py"};
  EXPECT_EQ(Read(pod).error(), "no container passes grain_worker_count");
  pod = TunedPod();
  pod["spec"]["nodeSelector"] = json::object();
  EXPECT_FALSE(Read(pod).ok());
  EXPECT_FALSE(Read(json::array()).ok());
  EXPECT_FALSE(Read({{"spec", "x"}}).ok());
}

// xpk's `create-pathways` head: the trainer runs on the cpu-np pool with limits of 24 cpu and
// 100G, asks for no TPU chips, and feeds the slices' chips from there.
json PathwaysHeadPod() {
  return json::parse(R"({
    "metadata": {"name": "pw-pathways-head-0-0", "namespace": "team-a"},
    "spec": {
      "nodeSelector": {"cloud.google.com/gke-nodepool": "cpu-np"},
      "initContainers": [{"name": "pathways-proxy", "args": ["--server_port=29000"],
                          "restartPolicy": "Always",
                          "resources": {"limits": {"cpu": "16", "memory": "100G"}}}],
      "containers": [{"name": "jax-tpu",
        "command": ["bash", "-c", "python3 -m MaxText.train MaxText/configs/base.yml grain_worker_count=-1"],
        "resources": {"limits": {"cpu": "24", "memory": "100G"}}}]}})");
}

TEST_F(ReadPodTuningInputsTest, XpkPathwaysHeadIsSizedFromItsOwnLimitsOnACpuHost) {
  Result<TuningInputs> in = Read(PathwaysHeadPod());
  ASSERT_TRUE(in.ok()) << in.error();
  EXPECT_DOUBLE_EQ(in->host.cpu_cores, 24);
  EXPECT_DOUBLE_EQ(in->host.memory_bytes, 100e9);
  EXPECT_EQ(in->host.tpu_chips, 0);
  EXPECT_NE(in->host.source.find("limits"), std::string::npos) << in->host.source;
  // MaxText's default batch and sequence over the chips assumed fed from the head.
  EXPECT_DOUBLE_EQ(in->demand.tokens_per_step_per_host, 12.0 * 2048 * kChipsAssumedFedFromACpuHost);
  EXPECT_NE(in->demand.basis.find("Pathways head"), std::string::npos) << in->demand.basis;
  const Decision d = Decide(*in, {});
  EXPECT_GE(d.workers, 1);
  EXPECT_LE(d.budgets.cpu, 24);  // the host's budget, never more than the container may use

  json no_limits = PathwaysHeadPod();
  no_limits["spec"]["containers"][0].erase("resources");
  Result<TuningInputs> unsized = Read(no_limits);
  ASSERT_FALSE(unsized.ok());
  EXPECT_NE(unsized.error().find("set cpu and memory limits"), std::string::npos) << unsized.error();
}

TEST_F(ReadPodTuningInputsTest, AnEnvOverrideCountsAsMaxTextsContainer) {
  json pod = TunedPod();
  pod["spec"]["containers"][0]["command"] = {"python3", "-m", "MaxText.train"};
  pod["spec"]["containers"][0]["env"] = {{{"name", "M_GRAIN_WORKER_COUNT"}, {"value", "9"}}};
  Result<TuningInputs> in = Read(pod);
  ASSERT_TRUE(in.ok()) << in.error();
  EXPECT_EQ(in->host.machine_type, "ct6e-standard-4t");
}

// The demand an earlier workload measured fed, under the same key, replaces the FLOPs estimate;
// a step time the job annotates wins over it.
class LearnedDemandInputsTest : public ::testing::Test {
 protected:
  Result<TuningInputs> Build(const WorkloadAnnotations& annotations) {
    const json pod = TunedPod();
    const json& container = pod["spec"]["containers"][0];
    warnings_.clear();
    return BuildTuningInputs(pod["spec"], container, ScanContainer(container), &config_,
                             annotations, Policy{}, InputSources{shapes_, &history_}, warnings_);
  }
  MachineTypeTableShapes shapes_;
  InMemoryHistory history_;
  ConfigValues config_ = {{"model_name", "llama3-8b"}, {"per_device_batch_size", "2"},
                          {"max_target_length", "8192"}};
  std::vector<std::string> warnings_;
};

TEST_F(LearnedDemandInputsTest, AFedThroughputMeasuredUnderTheSameKeyIsTheDemand) {
  Result<TuningInputs> estimated = Build(WorkloadAnnotations{});
  ASSERT_TRUE(estimated.ok()) << estimated.error();
  EXPECT_TRUE(estimated->demand.step_estimated);
  const std::string key = estimated->demand.transfer_key;
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(key.substr(0, key.find(", settings ")), "llama3-8b batch 2 seq 8192, 4x v6e on ct6e-standard-4t");

  history_.PutDemand(key, LearnedDemand{.tokens_per_second_per_host = 20000, .source = "GrainTuning team-b/llama"});
  Result<TuningInputs> learned = Build(WorkloadAnnotations{});
  ASSERT_TRUE(learned.ok()) << learned.error();
  EXPECT_FALSE(learned->demand.step_estimated);
  EXPECT_DOUBLE_EQ(learned->demand.tokens_per_second_per_host, 20000);
  EXPECT_DOUBLE_EQ(learned->demand.compute_step_seconds, 2.0 * 8192 * 4 / 20000);
  EXPECT_NE(learned->demand.basis.find("GrainTuning team-b/llama"), std::string::npos) << learned->demand.basis;
  EXPECT_EQ(learned->demand.transfer_key, key);

  WorkloadAnnotations annotated;
  annotated.step_seconds = 2.0;
  Result<TuningInputs> owners_word = Build(annotated);
  ASSERT_TRUE(owners_word.ok()) << owners_word.error();
  EXPECT_DOUBLE_EQ(owners_word->demand.compute_step_seconds, 2.0);

  config_["per_device_batch_size"] = "4";  // another batch: another step, nothing transfers
  Result<TuningInputs> other = Build(WorkloadAnnotations{});
  ASSERT_TRUE(other.ok()) << other.error();
  EXPECT_TRUE(other->demand.step_estimated);
  EXPECT_NE(other->demand.transfer_key, key);
}

}  // namespace
}  // namespace graintune::workload
