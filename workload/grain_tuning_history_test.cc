// GrainTuningHistory's learned profiles over a real informer cache (fed by the fake API server):
// which GrainTuning's learned rate an admission of a dataset gets.
#include <gtest/gtest.h>

#include "kube/fake_api_server.h"
#include "workload/cluster_sources.h"

namespace graintune::workload {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A workload in team-a, sharing with nobody.
const LearningReach kTeamA{"team-a", {}};

json Tuning(const std::string& name, const json& spec, const json& status) {
  return {{"apiVersion", "graintune.dev/v1alpha1"},
          {"kind", "GrainTuning"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec", spec},
          {"status", status}};
}

json Learned(double rate, const std::string& decided_at) {
  return {{"learnedTokensPerSecondPerWorker", rate},
          {"recommendation", {{"workers", 8}, {"decidedAt", decided_at}}},
          {"trials", {{{"attempt", 0}, {"workers", 4}, {"samples", 12}, {"workerMemoryBytes", 3000000000.0}}}}};
}

TEST(GrainTuningHistoryTest, TheNewestUsableLearnedRateOfTheDatasetWins) {
  auto api = std::make_shared<kube::FakeApiServer>();
  const json c4 = {{"dataset", "gs://corpus/c4"}, {"datasetKind", "raw-text"}};
  api->Put(kube::resources::kGrainTunings, Tuning("older", c4, Learned(2000, "2026-11-30T06:00:00Z")));
  api->Put(kube::resources::kGrainTunings, Tuning("newer", c4, Learned(2500, "2026-11-30T07:00:00Z")));
  // Not usable, though newer still: another dataset, no rate, a rate of the wrong type, a kind
  // graintune does not know, no spec at all.
  api->Put(kube::resources::kGrainTunings,
           Tuning("other-data", {{"dataset", "gs://corpus/pile"}}, Learned(9000, "2026-11-30T09:00:00Z")));
  api->Put(kube::resources::kGrainTunings, Tuning("no-rate", c4, {{"recommendation", {{"decidedAt", "2026-11-30T09:00:00Z"}}}}));
  json wrong_type = Learned(0, "2026-11-30T09:00:00Z");
  wrong_type["learnedTokensPerSecondPerWorker"] = "fast";
  api->Put(kube::resources::kGrainTunings, Tuning("wrong-type", c4, wrong_type));
  api->Put(kube::resources::kGrainTunings,
           Tuning("odd-kind", {{"dataset", "gs://corpus/c4"}, {"datasetKind", "holograms"}},
                  Learned(7000, "2026-11-30T09:00:00Z")));
  api->Put(kube::resources::kGrainTunings, json{{"apiVersion", "graintune.dev/v1alpha1"}, {"kind", "GrainTuning"},
                                                {"metadata", {{"name", "bare"}, {"namespace", "team-a"}}}});
  auto informer = std::make_shared<kube::Informer>(api->NewClient(), kube::resources::kGrainTunings);
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(10s));
  GrainTuningHistory history(informer);

  std::optional<LearnedDatasetProfile> learned = history.LearnedProfile(kTeamA, "gs://corpus/c4", "");
  ASSERT_TRUE(learned);
  EXPECT_EQ(learned->grain_tuning, "team-a/newer");
  const std::optional<DatasetProfile> c4_profile = learned->profile;
  EXPECT_DOUBLE_EQ(c4_profile->tokens_per_second_per_worker, 2500);
  EXPECT_EQ(c4_profile->kind, DatasetKind::kRawText);
  EXPECT_DOUBLE_EQ(c4_profile->worker_memory_bytes, 3000000000.0);
  EXPECT_EQ(c4_profile->source, "learned by GrainTuning team-a/newer");
  std::optional<LearnedDatasetProfile> pile = history.LearnedProfile(kTeamA, "gs://corpus/pile", "");
  ASSERT_TRUE(pile);
  EXPECT_DOUBLE_EQ(pile->profile.tokens_per_second_per_worker, 9000);
  // Another namespace's workloads do not see team-a's figures.
  EXPECT_FALSE(history.LearnedProfile({"team-b", {}}, "gs://corpus/pile", ""));
  EXPECT_TRUE(history.LearnedProfile({"team-b", {.namespaces = {"team-a"}}}, "gs://corpus/pile", ""));
  EXPECT_FALSE(history.LearnedProfile(kTeamA, "gs://corpus/unseen", ""));
  informer->Stop();
}

// The per-worker rate and memory transfer between runs of one dataset on one machine type: a
// rate measured on a v6e host's cores does not size a v5e host's workers.
TEST(GrainTuningHistoryTest, ALearnedProfileIsKeyedByDatasetAndMachineType) {
  auto api = std::make_shared<kube::FakeApiServer>();
  const json c4 = {{"dataset", "gs://corpus/c4"}, {"datasetKind", "raw-text"}};
  json on_v6e = Learned(2400, "2026-11-30T06:00:00Z");
  on_v6e["learned"] = {{"machineType", "ct6e-standard-4t"}, {"tokensPerSecondPerWorker", 2400},
                       {"rateBasis", "busy share of attempt 0"}, {"workerMemoryBytes", 2.2e9}};
  json on_v5e = Learned(1500, "2026-11-30T08:00:00Z");
  on_v5e["learned"] = {{"machineType", "ct5lp-hightpu-4t"}, {"tokensPerSecondPerWorker", 1500}};
  api->Put(kube::resources::kGrainTunings, Tuning("v6e-run", c4, on_v6e));
  api->Put(kube::resources::kGrainTunings, Tuning("v5e-run", c4, on_v5e));
  auto informer = std::make_shared<kube::Informer>(api->NewClient(), kube::resources::kGrainTunings);
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(10s));
  GrainTuningHistory history(informer);

  std::optional<LearnedDatasetProfile> learned_v6e = history.LearnedProfile(kTeamA, "gs://corpus/c4", "ct6e-standard-4t");
  ASSERT_TRUE(learned_v6e);
  const std::optional<DatasetProfile> v6e = learned_v6e->profile;
  EXPECT_DOUBLE_EQ(v6e->tokens_per_second_per_worker, 2400);
  EXPECT_DOUBLE_EQ(v6e->worker_memory_bytes, 2.2e9);  // status.learned's, over the trial's 3 GB
  EXPECT_TRUE(v6e->rate_known);
  EXPECT_EQ(v6e->source, "learned by GrainTuning team-a/v6e-run on ct6e-standard-4t");
  std::optional<LearnedDatasetProfile> v5e = history.LearnedProfile(kTeamA, "gs://corpus/c4", "ct5lp-hightpu-4t");
  ASSERT_TRUE(v5e);
  EXPECT_DOUBLE_EQ(v5e->profile.tokens_per_second_per_worker, 1500);
  // Nothing was measured on a v5p host, nor on an unknown one.
  EXPECT_FALSE(history.LearnedProfile(kTeamA, "gs://corpus/c4", "ct5p-hightpu-4t"));
  EXPECT_FALSE(history.LearnedProfile(kTeamA, "gs://corpus/c4", ""));
  informer->Stop();
}

// A demand transfers between workloads by its key alone (any dataset), within the namespaces
// learning spans: the newest fed throughput measured under that key there.
TEST(GrainTuningHistoryTest, ALearnedDemandIsTheNewestFedThroughputUnderItsKey) {
  auto api = std::make_shared<kube::FakeApiServer>();
  const std::string key = "llama3-8b batch 4 seq 8192, 4x v6e on ct6e-standard-4t, settings 00ff";
  auto with_demand = [](const std::string& demand_key, double fed, const std::string& decided_at) {
    json status = Learned(2400, decided_at);
    status["learned"] = {{"machineType", "ct6e-standard-4t"}, {"fedTokensPerSecondPerHost", fed},
                         {"demandKey", demand_key}};
    return status;
  };
  api->Put(kube::resources::kGrainTunings, Tuning("older", {{"dataset", "gs://corpus/c4"}},
                                                  with_demand(key, 61000, "2026-11-30T06:00:00Z")));
  json other_ns = Tuning("newer", {{"dataset", "gs://corpus/pile"}}, with_demand(key, 64000, "2026-11-30T07:00:00Z"));
  other_ns["metadata"]["namespace"] = "team-b";
  api->Put(kube::resources::kGrainTunings, other_ns);
  // Not usable, though newer: another key, a key but no fed figure, a figure of the wrong type,
  // a zero, a learned block that is not an object.
  api->Put(kube::resources::kGrainTunings,
           Tuning("other-key", json::object(), with_demand(key + "1", 99000, "2026-11-30T09:00:00Z")));
  json no_fed = with_demand(key, 1, "2026-11-30T09:00:00Z");
  no_fed["learned"].erase("fedTokensPerSecondPerHost");
  api->Put(kube::resources::kGrainTunings, Tuning("no-fed", json::object(), no_fed));
  json wrong_type = with_demand(key, 1, "2026-11-30T09:00:00Z");
  wrong_type["learned"]["fedTokensPerSecondPerHost"] = "lots";
  api->Put(kube::resources::kGrainTunings, Tuning("wrong-type", json::object(), wrong_type));
  api->Put(kube::resources::kGrainTunings,
           Tuning("zero", json::object(), with_demand(key, 0, "2026-11-30T09:00:00Z")));
  json not_object = with_demand(key, 1, "2026-11-30T09:00:00Z");
  not_object["learned"] = "everything";
  api->Put(kube::resources::kGrainTunings, Tuning("not-object", json::object(), not_object));
  auto informer = std::make_shared<kube::Informer>(api->NewClient(), kube::resources::kGrainTunings);
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(10s));
  GrainTuningHistory history(informer);

  std::optional<LearnedDemand> demand = history.LearnedDemandFor(kTeamA, key);
  ASSERT_TRUE(demand);
  EXPECT_DOUBLE_EQ(demand->tokens_per_second_per_host, 61000) << "team-b's newer figure is not team-a's";
  EXPECT_EQ(demand->grain_tuning, "team-a/older");
  const LearningReach shares_b{"team-a", {.namespaces = {"team-b"}}};
  std::optional<LearnedDemand> shared = history.LearnedDemandFor(shares_b, key);
  ASSERT_TRUE(shared);
  EXPECT_DOUBLE_EQ(shared->tokens_per_second_per_host, 64000);
  EXPECT_EQ(shared->grain_tuning, "team-b/newer");
  EXPECT_EQ(history.LearnedDemandFor({"team-a", {.all_namespaces = true}}, key)->grain_tuning, "team-b/newer");
  EXPECT_FALSE(history.LearnedDemandFor({"team-c", {}}, key)) << "nothing was measured in team-c";
  EXPECT_FALSE(history.LearnedDemandFor(shares_b, key + "2"));
  EXPECT_FALSE(history.LearnedDemandFor(shares_b, "")) << "an empty key transfers nothing";
  informer->Stop();
}

}  // namespace
}  // namespace graintune::workload
