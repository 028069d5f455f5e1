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

// A smoke run in an init container (a smaller batch) does not stand for the trainer.
TEST_F(ReadPodTuningInputsTest, TheTrainerNotASmokeInitContainerGivesTheInputs) {
  json pod = TunedPod();
  pod["spec"]["containers"][0]["command"].push_back("per_device_batch_size=8");
  const Result<TuningInputs> alone = Read(pod);
  ASSERT_TRUE(alone.ok()) << alone.error();
  pod["spec"]["initContainers"][0]["command"] = {"python3", "-m", "MaxText.train", "/etc/maxtext/base.yml",
                                                 "per_device_batch_size=1", "steps=2", "grain_worker_count=9"};
  pod["spec"]["initContainers"][0]["volumeMounts"] = pod["spec"]["containers"][0]["volumeMounts"];
  const Result<TuningInputs> with_smoke = Read(pod);
  ASSERT_TRUE(with_smoke.ok()) << with_smoke.error();
  EXPECT_GT(alone->demand.tokens_per_step_per_host, 0);
  EXPECT_EQ(with_smoke->demand.tokens_per_step_per_host, alone->demand.tokens_per_step_per_host);
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
  Result<TuningInputs> Build(const WorkloadAnnotations& annotations, const Policy& policy = Policy{}) {
    const json pod = TunedPod();
    const json& container = pod["spec"]["containers"][0];
    warnings_.clear();
    return BuildTuningInputs(pod["spec"], container, ScanContainer(container), &config_,
                             annotations, policy, InputSources{shapes_, &history_, "team-a"}, warnings_);
  }
  // A GrainTuning ns/name as the operator leaves it: a fed demand under `demand_key` and a
  // per-worker rate of gs://corpus/c4 on v6e hosts.
  static json Learner(const std::string& ns, const std::string& name, const std::string& demand_key) {
    return {{"metadata", {{"namespace", ns}, {"name", name}}},
            {"spec", {{"tuningKey", name}, {"dataset", "gs://corpus/c4"}, {"datasetKind", "raw-text"}}},
            {"status", {{"learnedTokensPerSecondPerWorker", 900},
                        {"learned", {{"machineType", "ct6e-standard-4t"}, {"demandKey", demand_key},
                                     {"fedTokensPerSecondPerHost", 20000}, {"workerMemoryBytes", 3e9}}},
                        {"recommendation", {{"decidedAt", "2026-11-30T06:00:00Z"}}}}}};
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

  history_.PutGrainTuning(Learner("team-a", "llama", key));
  Result<TuningInputs> learned = Build(WorkloadAnnotations{});
  ASSERT_TRUE(learned.ok()) << learned.error();
  EXPECT_FALSE(learned->demand.step_estimated);
  EXPECT_DOUBLE_EQ(learned->demand.tokens_per_second_per_host, 20000);
  EXPECT_DOUBLE_EQ(learned->demand.compute_step_seconds, 2.0 * 8192 * 4 / 20000);
  EXPECT_NE(learned->demand.basis.find("GrainTuning team-a/llama"), std::string::npos) << learned->demand.basis;
  EXPECT_EQ(learned->demand.transfer_key, key);
  EXPECT_EQ(learned->learned_from, std::vector<std::string>{"team-a/llama"});

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

// Learned figures stay in the namespace that measured them: team-b's demand and dataset rate
// reach a team-a workload only when team-a's policy shares team-b (or every namespace) with it.
TEST_F(LearnedDemandInputsTest, LearnedFiguresOfAnotherNamespaceAreUsedOnlyWhenAPolicySharesIt) {
  WorkloadAnnotations c4;
  c4.dataset = "gs://corpus/c4";
  Result<TuningInputs> own = Build(c4);
  ASSERT_TRUE(own.ok()) << own.error();
  const std::string key = own->demand.transfer_key;
  history_.PutGrainTuning(Learner("team-b", "llama-b", key));

  Result<TuningInputs> alone = Build(c4);
  ASSERT_TRUE(alone.ok()) << alone.error();
  EXPECT_TRUE(alone->demand.step_estimated) << alone->demand.basis;
  EXPECT_FALSE(alone->profile.rate_known) << alone->profile.source;
  EXPECT_TRUE(alone->learned_from.empty());
  EXPECT_DOUBLE_EQ(alone->demand.tokens_per_second_per_host, own->demand.tokens_per_second_per_host);

  Policy shares_b;
  shares_b.learn_from.namespaces = {"team-c", "team-b"};
  Result<TuningInputs> shared = Build(c4, shares_b);
  ASSERT_TRUE(shared.ok()) << shared.error();
  EXPECT_FALSE(shared->demand.step_estimated);
  EXPECT_DOUBLE_EQ(shared->demand.tokens_per_second_per_host, 20000);
  EXPECT_TRUE(shared->profile.rate_known);
  EXPECT_DOUBLE_EQ(shared->profile.tokens_per_second_per_worker, 900);
  EXPECT_EQ(shared->profile.source, "learned by GrainTuning team-b/llama-b on ct6e-standard-4t");
  EXPECT_EQ(shared->learned_from, std::vector<std::string>{"team-b/llama-b"}) << "named once";

  Policy everyone;
  everyone.learn_from.all_namespaces = true;
  Result<TuningInputs> cluster = Build(c4, everyone);
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  EXPECT_EQ(cluster->learned_from, std::vector<std::string>{"team-b/llama-b"});

  Policy shares_c;
  shares_c.learn_from.namespaces = {"team-c"};
  Result<TuningInputs> other = Build(c4, shares_c);
  ASSERT_TRUE(other.ok()) << other.error();
  EXPECT_TRUE(other->learned_from.empty());
  EXPECT_TRUE(other->demand.step_estimated);

  // The workload's own namespace's figures, when it has some, are in reach without a policy.
  history_.PutGrainTuning(Learner("team-a", "llama-a", key));
  Result<TuningInputs> at_home = Build(c4);
  ASSERT_TRUE(at_home.ok()) << at_home.error();
  EXPECT_EQ(at_home->learned_from, std::vector<std::string>{"team-a/llama-a"});
}

TEST(LearningScopeTest, TheOwnNamespaceAlwaysThenTheSharedOnesOrEveryOne) {
  LearningScope scope;
  EXPECT_TRUE(scope.Includes("team-a", "team-a"));
  EXPECT_FALSE(scope.Includes("team-a", "team-b"));
  EXPECT_EQ(scope.Describe("team-a"), "namespace team-a");
  scope.namespaces = {"team-b", "team-a"};
  EXPECT_TRUE(scope.Includes("team-a", "team-b"));
  EXPECT_FALSE(scope.Includes("team-a", "team-c"));
  EXPECT_EQ(scope.Describe("team-a"), "namespaces team-a, team-b");
  scope.all_namespaces = true;
  EXPECT_TRUE(scope.Includes("team-a", "team-c"));
  EXPECT_EQ(scope.Describe("team-a"), "every namespace");
}

}  // namespace
}  // namespace graintune::workload
