#include "workload/graintune_objects.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

using json = nlohmann::json;

TEST(GraintuneObjectsTest, LabelSelectors) {
  const std::map<std::string, std::string> labels = {{"team", "llm"}, {"tier", "prod"}};
  EXPECT_TRUE(SelectorMatches(json(), labels));
  EXPECT_TRUE(SelectorMatches(json::object(), labels));
  EXPECT_TRUE(SelectorMatches({{"matchLabels", {{"team", "llm"}}}}, labels));
  EXPECT_FALSE(SelectorMatches({{"matchLabels", {{"team", "vision"}}}}, labels));
  EXPECT_TRUE(SelectorMatches(
      {{"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"prod", "staging"}}},
                             {{"key", "legacy"}, {"operator", "DoesNotExist"}}}}},
      labels));
  EXPECT_FALSE(SelectorMatches({{"matchExpressions", {{{"key", "tier"}, {"operator", "NotIn"}, {"values", {"prod"}}}}}}, labels));
  EXPECT_FALSE(SelectorMatches({{"matchExpressions", {{{"key", "team"}, {"operator", "Sometimes"}}}}}, labels));
}

TEST(GraintuneObjectsTest, PolicyFromObjectAndPrecedence) {
  const json team = {{"metadata", {{"name", "team-llm"}}},
                     {"spec", {{"priority", 10}, {"mode", "Initial"}, {"maxWorkers", 32},
                               {"reservedMemory", "64Gi"}, {"reservedCpu", 8},
                               {"objective", "FewestWorkers"},
                               {"namespaceSelector", {{"matchLabels", {{"team", "llm"}}}}}}}};
  const json cluster = {{"metadata", {{"name", "cluster-default"}}}, {"spec", {{"maxWorkers", 64}}}};
  Result<Policy> p = PolicyFromObject(team);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode, Mode::kInitial);
  EXPECT_EQ(p->max_workers, 32);
  EXPECT_EQ(p->object_name, "team-llm");
  EXPECT_EQ(p->name, "GrainTunePolicy team-llm");
  EXPECT_DOUBLE_EQ(*p->reserved_memory_bytes, 64.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(*p->reserved_cpu_cores, 8);
  EXPECT_EQ(p->objective, Objective::kFewestWorkers);
  EXPECT_EQ(p->name, "GrainTunePolicy team-llm");

  const std::vector<json> all = {cluster, team};
  EXPECT_EQ((*PolicyCovering(all, {{"team", "llm"}}, {}))["metadata"]["name"], "team-llm");
  EXPECT_EQ((*PolicyCovering(all, {{"team", "vision"}}, {}))["metadata"]["name"], "cluster-default");
  EXPECT_FALSE(PolicyCovering({team}, {}, {}).has_value());

  json bad = cluster;
  bad["spec"]["minWorkers"] = 70;  // above maxWorkers
  EXPECT_FALSE(PolicyFromObject(bad).ok());
  bad = cluster;
  bad["spec"]["reservedMemory"] = "lots";
  Result<Policy> r = PolicyFromObject(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("reservedMemory"), std::string::npos);
}

// spec.learnFrom: whose learned figures the covered workloads may use besides their own
// namespace's. Absent: none; a value of the wrong shape refuses the policy with the field named.
TEST(GraintuneObjectsTest, PolicyLearnFromNamesTheNamespacesThatShare) {
  json policy = {{"metadata", {{"name", "team-b"}}}, {"spec", {{"maxWorkers", 64}}}};
  Result<Policy> none = PolicyFromObject(policy);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_TRUE(none->learn_from.namespaces.empty());
  EXPECT_FALSE(none->learn_from.all_namespaces);

  policy["spec"]["learnFrom"] = {{"namespaces", {"team-a", "research"}}};
  Result<Policy> shares = PolicyFromObject(policy);
  ASSERT_TRUE(shares.ok()) << shares.error();
  EXPECT_EQ(shares->learn_from.namespaces, (std::vector<std::string>{"team-a", "research"}));
  EXPECT_TRUE(shares->learn_from.Includes("team-b", "team-a"));
  EXPECT_FALSE(shares->learn_from.Includes("team-b", "team-c"));

  policy["spec"]["learnFrom"] = {{"allNamespaces", true}};
  Result<Policy> all = PolicyFromObject(policy);
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_TRUE(all->learn_from.Includes("team-b", "anything"));

  for (const json& bad : {json("team-a"), json{{"namespaces", "team-a"}}, json{{"namespaces", {1}}},
                          json{{"allNamespaces", "yes"}}, json{{"namespaces", json::array({""})}},
                          json{{"namespaces", std::vector<std::string>(kMaxSharedNamespaces + 1, "ns")}}}) {
    policy["spec"]["learnFrom"] = bad;
    Result<Policy> refused = PolicyFromObject(policy);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_NE(refused.error().find("learnFrom"), std::string::npos) << refused.error();
  }
}

// spec.lap: absent is no lap; Training with its bounds; anything out of range or of the wrong
// shape refuses the policy with the field named.
TEST(GraintuneObjectsTest, PolicyLapIsOffUnlessAskedAndBounded) {
  json policy = {{"metadata", {{"name", "team-b"}}}, {"spec", {{"maxWorkers", 64}}}};
  Result<Policy> none = PolicyFromObject(policy);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none->lap.mode, LapPolicy::Mode::kOff);
  EXPECT_FALSE(none->lap.steps.has_value());

  policy["spec"]["lap"] = {{"mode", "Training"}, {"steps", 60}, {"timeoutSeconds", 600}};
  Result<Policy> training = PolicyFromObject(policy);
  ASSERT_TRUE(training.ok()) << training.error();
  EXPECT_EQ(training->lap.mode, LapPolicy::Mode::kTraining);
  EXPECT_EQ(training->lap.steps, 60);
  EXPECT_EQ(training->lap.timeout_seconds, 600);
  EXPECT_FALSE(none->lap.timeout_seconds.has_value());  // unset: sized for the lap's steps
  EXPECT_EQ(training->lap.answer_wait_seconds, 120);
  EXPECT_DOUBLE_EQ(training->lap.max_run_share, 0.03);  // unset: 3% of the run
  policy["spec"]["lap"]["maxRunShare"] = 0.25;
  EXPECT_DOUBLE_EQ(PolicyFromObject(policy)->lap.max_run_share, 0.25);

  for (const json& bad : {json("Training"), json{{"mode", "DataOnly"}}, json{{"mode", 1}},
                          json{{"steps", 5}}, json{{"steps", "40"}}, json{{"timeoutSeconds", 30}},
                          json{{"timeoutSeconds", 36000}}, json{{"answerWaitSeconds", -1}},
                          json{{"maxRunShare", 0}}, json{{"maxRunShare", 1.5}}, json{{"maxRunShare", "3%"}}}) {
    policy["spec"]["lap"] = bad;
    Result<Policy> refused = PolicyFromObject(policy);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_NE(refused.error().find("lap"), std::string::npos) << refused.error();
  }
}

TEST(GraintuneObjectsTest, PolicyStartCheckIsOnUnlessTurnedOff) {
  json policy = {{"kind", "GrainTunePolicy"}, {"metadata", {{"name", "p"}}}, {"spec", json::object()}};
  Result<Policy> unset = PolicyFromObject(policy);
  ASSERT_TRUE(unset.ok()) << unset.error();
  EXPECT_TRUE(unset->start_check);
  policy["spec"]["startCheck"] = false;
  Result<Policy> off = PolicyFromObject(policy);
  ASSERT_TRUE(off.ok()) << off.error();
  EXPECT_FALSE(off->start_check);
  for (const json& bad : {json("false"), json(0), json::object()}) {
    policy["spec"]["startCheck"] = bad;
    Result<Policy> refused = PolicyFromObject(policy);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_NE(refused.error().find("spec.startCheck is not true or false"), std::string::npos) << refused.error();
  }
}

TEST(GraintuneObjectsTest, StaticPoliciesForTheStandaloneWebhook) {
  const json team = {{"kind", "GrainTunePolicy"}, {"metadata", {{"name", "team"}}},
                     {"spec", {{"priority", 5}, {"maxWorkers", 8},
                               {"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", "llm"}}}}}}}};
  Result<StaticPolicies> p = StaticPolicies::FromObjects({team, {{"kind", "ConfigMap"}}});
  ASSERT_TRUE(p.ok()) << p.error();
  StaticPolicies policies = *p;
  EXPECT_EQ(policies.size(), 1u);
  EXPECT_EQ(policies.PolicyFor("llm", {}).max_workers, 8);
  EXPECT_EQ(policies.PolicyFor("other", {}).max_workers, Policy{}.max_workers);
  json bad = team;
  bad["spec"]["mode"] = "Sometimes";
  EXPECT_FALSE(StaticPolicies::FromObjects({bad}).ok());
}

TEST(GraintuneObjectsTest, TrialsAndHistoryRoundTrip) {
  Trial t;
  t.attempt = 0;
  t.workers = 4;
  t.samples = 20;
  t.step_seconds_p50 = 7.4;
  t.step_seconds_p90 = 7.5;
  t.step_seconds_mean = 6.9;
  t.step_spread = 0.5;  // data-bound
  t.tflops_per_device = 58;
  const json status = {{"trials", {TrialToJson(t)}},
                       {"recommendation", {{"workers", 9}, {"attempt", 1}, {"reason", "because"}}}};
  const json gt = {{"spec", {{"tuningKey", "k"}, {"mode", "Auto"}}}, {"status", status}};
  TuningHistory h = HistoryFromGrainTuning(gt);
  ASSERT_EQ(h.trials.size(), 1u);
  EXPECT_EQ(h.trials[0].workers, 4);
  EXPECT_TRUE(IsDataBound(h.trials[0]));
  EXPECT_DOUBLE_EQ(h.trials[0].step_seconds_p50, 7.4);
  EXPECT_EQ(*h.recommended_workers, 9);
  EXPECT_EQ(h.recommendation_attempt, 1);
  EXPECT_TRUE(h.ended_attempts.empty());
  EXPECT_TRUE(HistoryFromGrainTuning(json::object()).trials.empty());
  json ended = gt;
  ended["status"]["endedAttempts"] = {0, "1", -2, 3};  // only non-negative integers count
  EXPECT_EQ(HistoryFromGrainTuning(ended).ended_attempts, std::set<int>({0, 3}));
}

TEST(GraintuneObjectsTest, NamesForTuningKeys) {
  EXPECT_EQ(GrainTuningName("llama3-8b-v6e-32"), "llama3-8b-v6e-32");
  const std::string odd = GrainTuningName("Team/Llama 3");
  EXPECT_EQ(odd.rfind("team-llama-3-", 0), 0u) << odd;
  EXPECT_NE(GrainTuningName("Team/Llama 3"), GrainTuningName("team-llama-3"));
  EXPECT_EQ(GrainTuningName("Team/Llama 3"), odd);  // stable
}

}  // namespace
}  // namespace graintune::workload
