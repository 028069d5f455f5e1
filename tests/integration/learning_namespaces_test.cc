// Learning stays in its namespace, against a real kube-apiserver and the real graintune-webhook:
// team-a's GrainTuning holds figures learned from slow steps (written through the API, as the
// operator writes them); team-b's first pick for the same dataset and demand key does not move
// until the GrainTunePolicy covering team-b shares team-a with it. `graintune explain` says the
// same as the webhook: the demand key, and which GrainTuning the value learned from.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/commands.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"
#include "workload/yaml_json.h"

namespace graintune::testing {
namespace {

using nlohmann::json;

// One v6e host's Llama3-8B trainer reading c4 through Grain, with grain_worker_count=-1.
std::string TrainerJob(const std::string& ns, const std::string& name) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  namespace: " + ns + R"(
  annotations: {graintune.dev/dataset: c4-en-raw}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x2}
      containers:
        - name: maxtext
          image: maxtext:latest
          command: [python3, -m, MaxText.train, MaxText/configs/base.yml, model_name=llama3-8b,
                    per_device_batch_size=2, max_target_length=8192, dataset_type=grain, grain_worker_count=-1]
          resources: {limits: {google.com/tpu: 4}}
)";
}

// The policy covering team-b: bounds only, or also sharing team-a's learned figures.
std::string TeamBPolicy(bool shares_team_a) {
  return std::string(R"(apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: team-b}
spec:
  priority: 10
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-b}}
  maxWorkers: 64
)") + (shares_team_a ? "  learnFrom: {namespaces: [team-a]}\n" : "");
}

// What the webhook made of a Job: its graintune.dev/ annotations, from a server-side dry run.
Result<std::map<std::string, std::string>> Admitted(ControlPlane& cp, const std::string& manifest) {
  Result<std::string> stored = cp.Kubectl({"create", "--dry-run=server", "-o", "json", "-f", "-"}, manifest);
  if (!stored.ok()) return stored.status();
  const size_t brace = stored->find('{');  // after kubectl's "Warning: ..." lines
  if (brace == std::string::npos) return Status::Error("no object in: " + *stored);
  const json job = json::parse(stored->substr(brace), nullptr, false);
  std::map<std::string, std::string> out;
  const json::json_pointer at("/metadata/annotations");
  if (job.is_object() && job.contains(at))
    for (const auto& [key, value] : job.at(at).items())
      if (key.rfind("graintune.dev/", 0) == 0 && value.is_string()) out[key] = value.get<std::string>();
  return out;
}

// `graintune explain -o json` of `manifests` (one entry per workload).
json Explain(const std::string& manifests) {
  std::istringstream in(manifests);
  std::ostringstream out, err;
  if (cli::RunExplain({"-", "-o", "json"}, in, out, err) != 0) return json{{"error", err.str()}};
  return json::parse(out.str(), nullptr, false);
}

TEST(LearningNamespaces, AnotherNamespacesFiguresMoveAFirstPickOnlyWhenItsPolicySharesThem) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  for (const char* ns : {"team-a", "team-b"}) ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, TeamBPolicy(false)).ok());
  auto webhook = WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();

  // team-b's first pick before anyone learned anything, and the demand key it is looked up by.
  const std::string team_b_job = TrainerJob("team-b", "llama-b");
  const json before = Explain(TeamBPolicy(false) + "---\n" + team_b_job);
  ASSERT_TRUE(before.is_array() && before.size() == 1) << before.dump();
  const std::string demand_key = before[0].value("demand_key", "");
  ASSERT_FALSE(demand_key.empty()) << before.dump();
  EXPECT_EQ(before[0]["learned_from"], json::array());
  Result<std::map<std::string, std::string>> alone = Admitted(*cp, team_b_job);
  ASSERT_TRUE(alone.ok()) << alone.error();
  const std::string first_pick = (*alone)["graintune.dev/worker-count"];
  ASSERT_FALSE(first_pick.empty()) << (*webhook)->Log();
  EXPECT_EQ(first_pick, std::to_string(before[0]["workers"].get<int>()));
  EXPECT_EQ(alone->count("graintune.dev/learned-from"), 0u);

  // team-a's run measured slow steps: its fed throughput (the demand under the same key) is a
  // fifth of the estimate, and its workers were fast. The operator's figures, through the API.
  const json spec = {{"tuningKey", "llama-a"}, {"dataset", "c4-en-raw"}, {"datasetKind", "raw-text"}};
  json gt = {{"apiVersion", "graintune.dev/v1alpha1"}, {"kind", "GrainTuning"},
             {"metadata", {{"name", "llama-a"}, {"namespace", "team-a"}}}, {"spec", spec}};
  auto created = cp->AdminClient()->Create(kube::resources::kGrainTunings, "team-a", gt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  json with_status = *created;
  with_status["status"] = {
      {"phase", "Converged"},
      {"recommendation", {{"workers", 2}, {"attempt", 1}, {"reason", "fed"}, {"decidedAt", "2026-11-30T06:00:00Z"}}},
      {"learnedTokensPerSecondPerWorker", 6000},
      {"learned", {{"machineType", "ct6e-standard-4t"}, {"tokensPerSecondPerWorker", 6000},
                   {"workerMemoryBytes", 1.5e9}, {"fedTokensPerSecondPerHost", 3000},
                   {"demandKey", demand_key}}}};
  auto written = cp->AdminClient()->Replace(kube::resources::kGrainTunings, "team-a", with_status, "status");
  ASSERT_TRUE(written.ok()) << written.status().message();

  // In team-a itself the figures are in reach: once the webhook's cache has them, its pick uses them.
  std::map<std::string, std::string> at_home;
  ASSERT_TRUE(WaitFor([&] {
    Result<std::map<std::string, std::string>> a = Admitted(*cp, TrainerJob("team-a", "llama-a2"));
    if (a.ok()) at_home = *a;
    return at_home["graintune.dev/learned-from"] == "team-a/llama-a";
  }, std::chrono::seconds(30))) << (*webhook)->Log();
  EXPECT_NE(at_home["graintune.dev/reason"].find("fed throughput measured by GrainTuning team-a/llama-a"),
            std::string::npos) << at_home["graintune.dev/reason"];

  // team-b's first pick does not move: nothing covering team-b shares team-a.
  Result<std::map<std::string, std::string>> unshared = Admitted(*cp, team_b_job);
  ASSERT_TRUE(unshared.ok()) << unshared.error();
  EXPECT_EQ((*unshared)["graintune.dev/worker-count"], first_pick);
  EXPECT_EQ(unshared->count("graintune.dev/learned-from"), 0u);
  const std::string team_a_tuning = written->dump();
  const json still = Explain(TeamBPolicy(false) + "---\n" + team_a_tuning + "\n---\n" + team_b_job);
  ASSERT_TRUE(still.is_array() && still.size() == 1) << still.dump();
  EXPECT_EQ(still[0]["learned_from"], json::array());

  // The policy covering team-b shares team-a: the same admission now learns from team-a.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, TeamBPolicy(true)).ok());
  std::map<std::string, std::string> shared;
  ASSERT_TRUE(WaitFor([&] {
    Result<std::map<std::string, std::string>> b = Admitted(*cp, team_b_job);
    if (b.ok()) shared = *b;
    return shared["graintune.dev/learned-from"] == "team-a/llama-a";
  }, std::chrono::seconds(30))) << (*webhook)->Log();
  EXPECT_NE(shared["graintune.dev/worker-count"], first_pick);
  EXPECT_LT(std::stoi(shared["graintune.dev/worker-count"]), std::stoi(first_pick))
      << "slow steps need fewer workers";
  // explain, given the same objects, names the same GrainTuning and the same value.
  const json after = Explain(TeamBPolicy(true) + "---\n" + team_a_tuning + "\n---\n" + team_b_job);
  ASSERT_TRUE(after.is_array() && after.size() == 1) << after.dump();
  EXPECT_EQ(after[0]["learned_from"], json::array({"team-a/llama-a"}));
  EXPECT_EQ(after[0]["demand_key"], demand_key);
  EXPECT_EQ(std::to_string(after[0]["workers"].get<int>()), shared["graintune.dev/worker-count"]);
  std::printf("team-b's first pick: %s alone, %s when team-a's figures are shared (%s)\n",
              first_pick.c_str(), shared["graintune.dev/worker-count"].c_str(),
              shared["graintune.dev/reason"].c_str());
}

}  // namespace
}  // namespace graintune::testing
