// graintune's CRDs in a real API server: schemas accept what the operator writes and refuse
// what they should (OpenAPI and CEL rules), defaults are applied, the status subresource is
// separate, printer columns and `kubectl explain` work.
#include <gtest/gtest.h>

#include "kube/backoff.h"
#include "tests/controlplane/shared_control_plane.h"

namespace graintune::kube {
namespace {

using testing::ControlPlaneKind;

Json Policy(const std::string& name, const Json& spec) {
  return {{"apiVersion", "graintune.dev/v1alpha1"},
          {"kind", "GrainTunePolicy"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

TEST(CrdsIntegration, PolicyDefaultsAndValidation) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  ApiResult<Json> created = c->Create(resources::kGrainTunePolicies, "",
                                      Policy("team-a", {{"maxWorkers", 32}, {"reservedMemory", "64Gi"}}));
  ASSERT_TRUE(created.ok()) << created.status().message();
  const Json spec = (*created)["spec"];
  EXPECT_EQ(spec["mode"], "Auto");
  EXPECT_EQ(spec["minWorkers"], 1);
  EXPECT_DOUBLE_EQ(spec["safetyFactor"].get<double>(), 1.25);
  EXPECT_EQ(spec["objective"], "Throughput");

  ApiResult<Json> inverted = c->Create(resources::kGrainTunePolicies, "",
                                       Policy("inverted", {{"minWorkers", 9}, {"maxWorkers", 4}}));
  ASSERT_FALSE(inverted.ok());
  EXPECT_EQ(inverted.error().code, 422);
  EXPECT_NE(inverted.error().message.find("minWorkers must not exceed maxWorkers"), std::string::npos)
      << inverted.error().message;
  ApiResult<Json> bad_mode = c->Create(resources::kGrainTunePolicies, "",
                                       Policy("bad-mode", {{"mode", "Sometimes"}}));
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.error().message.find("Unsupported value: \"Sometimes\""), std::string::npos)
      << bad_mode.error().message;
  ApiResult<Json> bad_memory = c->Create(resources::kGrainTunePolicies, "",
                                         Policy("bad-memory", {{"reservedMemory", "lots"}}));
  EXPECT_FALSE(bad_memory.ok());
  ApiResult<Json> bad_safety = c->Create(resources::kGrainTunePolicies, "",
                                         Policy("bad-safety", {{"safetyFactor", 0.5}}));
  EXPECT_FALSE(bad_safety.ok());

  // learnFrom: the namespaces that share learned figures with the covered workloads, or all.
  ApiResult<Json> shares = c->Create(resources::kGrainTunePolicies, "",
                                     Policy("shares", {{"learnFrom", {{"namespaces", {"team-a", "team-b"}}}}}));
  ASSERT_TRUE(shares.ok()) << shares.status().message();
  EXPECT_EQ((*shares)["spec"]["learnFrom"]["allNamespaces"], false);
  ApiResult<Json> both = c->Create(resources::kGrainTunePolicies, "",
      Policy("both", {{"learnFrom", {{"namespaces", {"team-a"}}, {"allNamespaces", true}}}}));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("set either namespaces or allNamespaces, not both"), std::string::npos)
      << both.error().message;
  EXPECT_FALSE(c->Create(resources::kGrainTunePolicies, "",
                         Policy("bad-ns", {{"learnFrom", {{"namespaces", {"Team A"}}}}})).ok());

  // lap: Off unless asked ("Off" quoted in the schema: YAML would read a bare Off as false), its
  // bounds enforced by the API server.
  ApiResult<Json> lap = c->Create(resources::kGrainTunePolicies, "", Policy("lap", {{"lap", Json::object()}}));
  ASSERT_TRUE(lap.ok()) << lap.status().message();
  EXPECT_EQ((*lap)["spec"]["lap"]["mode"], "Off");
  EXPECT_EQ((*lap)["spec"]["lap"]["answerWaitSeconds"], 120);
  EXPECT_EQ((*lap)["spec"]["lap"]["maxRunShare"], 0.03);
  EXPECT_TRUE(c->Create(resources::kGrainTunePolicies, "",
                        Policy("laps", {{"lap", {{"mode", "Training"}, {"steps", 200}}}})).ok());
  for (const auto& [name, bad] : {std::pair<const char*, Json>{"lap-mode", {{"mode", "DataOnly"}}},
                                  {"lap-steps", {{"steps", 5}}},
                                  {"lap-timeout", {{"timeoutSeconds", 7200}}},
                                  {"lap-share-none", {{"maxRunShare", 0}}},
                                  {"lap-share-over", {{"maxRunShare", 1.5}}}})
    EXPECT_FALSE(c->Create(resources::kGrainTunePolicies, "", Policy(name, {{"lap", bad}})).ok()) << name;
}

TEST(CrdsIntegration, TuningStatusIsASubresourceWithPrinterColumns) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  Json gt = {{"apiVersion", "graintune.dev/v1alpha1"},
             {"kind", "GrainTuning"},
             {"metadata", {{"name", "llama3-8b"}, {"namespace", "default"}}},
             {"spec", {{"tuningKey", "llama3-8b"},
                       {"workload", {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"},
                                     {"name", "llama3-8b"}}}}},
             {"status", {{"phase", "Converged"}}}};
  ApiResult<Json> created = c->Create(resources::kGrainTunings, "default", gt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_FALSE(created->contains("status")) << "status is ignored on create";

  const Json trial = {{"attempt", 0}, {"workers", 4}, {"stepTimeMeanSeconds", 7.4},
                      {"tflopsPerDevice", 58.2}, {"dataBound", true}, {"samples", 20}};
  ApiResult<Json> updated = UpdateWithRetry(*c, resources::kGrainTunings, "default", "llama3-8b",
                                            "status", [&](Json& o) {
                                              o["status"] = {{"phase", "Exploring"},
                                                             {"recommendation", {{"workers", 9}, {"attempt", 1}, {"reason", "x"}}},
                                                             {"trials", {trial}},
                                                             {"lastTrial", trial}};
                                              return true;
                                            });
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  Result<std::string> table = cp->Kubectl({"get", "graintunings", "-n", "default"});
  ASSERT_TRUE(table.ok()) << table.error();
  EXPECT_NE(table->find("KEY"), std::string::npos) << *table;
  EXPECT_NE(table->find("llama3-8b   9 "), std::string::npos) << *table;
  EXPECT_NE(table->find("7.4"), std::string::npos) << *table;
  EXPECT_NE(table->find("58.2"), std::string::npos) << *table;
  EXPECT_NE(table->find("Exploring"), std::string::npos) << *table;

  // Invalid status is refused; the key cannot change.
  ApiResult<Json> bad = UpdateWithRetry(*c, resources::kGrainTunings, "default", "llama3-8b",
                                        "status", [](Json& o) {
                                          o["status"]["phase"] = "Guessing";
                                          return true;
                                        });
  EXPECT_FALSE(bad.ok());
  ApiResult<Json> rekey = c->Patch(resources::kGrainTunings, "default", "llama3-8b",
                                   PatchType::kMerge, {{"spec", {{"tuningKey", "other"}}}});
  ASSERT_FALSE(rekey.ok());
  EXPECT_NE(rekey.error().message.find("tuningKey is immutable"), std::string::npos);

  Result<std::string> explain = cp->Kubectl({"explain", "graintuning.status.trials.tflopsPerDevice"});
  ASSERT_TRUE(explain.ok()) << explain.error();
  EXPECT_NE(explain->find("TFLOP/s per device reported by MaxText"), std::string::npos) << *explain;
}

}  // namespace
}  // namespace graintune::kube
