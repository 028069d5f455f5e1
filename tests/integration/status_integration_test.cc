// `graintune status` and `kubectl graintune status` (the kubectl plugin) against a real
// kube-apiserver: the real binary reads GrainTunings through the kubeconfig and prints their
// trials; kubectl finds the plugin on PATH as kubectl-graintune.
#include <gtest/gtest.h>

#include "kube/client.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/shared_control_plane.h"

namespace graintune::testing {
namespace {

using kube::Json;

// A GrainTuning as the operator leaves it after three attempts.
void CreateGrainTuning(ControlPlane& cp, const std::string& ns, const std::string& name) {
  auto client = cp.AdminClient();
  if (ns != "default")
    client->Create(kube::resources::kNamespaces, "", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                      {"metadata", {{"name", ns}}}});
  Json gt = {{"apiVersion", "graintune.dev/v1alpha1"}, {"kind", "GrainTuning"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"spec", {{"tuningKey", name}}}};
  kube::ApiResult<Json> created = client->Create(kube::resources::kGrainTunings, ns, gt);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  (*created)["status"] = Json::parse(R"({
    "phase": "Converged",
    "recommendation": {"workers": 10, "attempt": 3, "reason": "fewest workers that kept the chips fed"},
    "trials": [
      {"attempt": 0, "workers": 4, "samples": 18, "stepTimeMeanSeconds": 6.885, "tflopsPerDevice": 144.1, "dataBound": true},
      {"attempt": 1, "workers": 15, "samples": 18, "stepTimeMeanSeconds": 4.299, "tflopsPerDevice": 195.1, "dataBound": false},
      {"attempt": 2, "workers": 10, "samples": 18, "stepTimeMeanSeconds": 4.299, "tflopsPerDevice": 195.1, "dataBound": false}]})");
  kube::ApiResult<Json> updated = client->Replace(kube::resources::kGrainTunings, ns, *created, "status");
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
}

Result<std::string> RunTool(const std::string& command) { return RunShell(command + " 2>&1", command); }

TEST(Status, PrintsTheTrialsOfAGrainTuningFromTheCluster) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  CreateGrainTuning(*cp, "team-status", "llama3-8b");
  const std::string graintune = std::string(GRAINTUNE_CLI_BIN);
  const std::string kubeconfig = " --kubeconfig '" + cp->kubeconfig_path() + "'";

  Result<std::string> text = RunTool(graintune + " status -n team-status llama3-8b" + kubeconfig);
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_EQ(*text,
            "GrainTuning team-status/llama3-8b: Converged\n"
            "  next: attempt 3 gets 10 workers\n"
            "  why:  fewest workers that kept the chips fed\n"
            "\n"
            "ATTEMPT   WORKERS   STEP     TFLOP/S   DATA-BOUND   VERDICT\n"
            "0         4         6.885s   144.1     yes          60% slower than attempt 1\n"
            "1         15        4.299s   195.1     no           as fast as attempt 2, more workers\n"
            "2         10        4.299s   195.1     no           best so far\n");

  Result<std::string> json = RunTool(graintune + " status -n team-status -o json" + kubeconfig);
  ASSERT_TRUE(json.ok()) << json.error();
  const Json listed = Json::parse(*json);
  ASSERT_EQ(listed["items"].size(), 1u);
  EXPECT_EQ(listed["items"][0]["trials"][2]["verdict"], "best so far");
  EXPECT_EQ(listed["items"][0]["recommendation"]["workers"], 10);

  Result<std::string> yaml = RunTool(graintune + " status -A -o yaml" + kubeconfig);
  ASSERT_TRUE(yaml.ok()) << yaml.error();
  EXPECT_NE(yaml->find("namespace: team-status"), std::string::npos) << *yaml;

  Result<std::string> missing = RunTool(graintune + " status -n team-status nothing-here" + kubeconfig);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("NotFound"), std::string::npos) << missing.error();

  Result<std::string> empty = RunTool(graintune + " status -n kube-public" + kubeconfig);
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(*empty, "No GrainTunings in namespace kube-public.\n");
}

TEST(KubectlPlugin, KubectlRunsGraintuneFromPath) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  CreateGrainTuning(*cp, "team-plugin", "llama3-8b");
  // kubectl from the machine, the plugin from the build folder (kubectl-graintune -> graintune);
  // a plugin reads the cluster from $KUBECONFIG, as kubectl does.
  const std::string env = "PATH='" + std::string(GRAINTUNE_CLI_DIR) + "':\"$PATH\" KUBECONFIG='" +
                          cp->kubeconfig_path() + "' ";
  Result<std::string> listed = RunTool(env + "kubectl plugin list");
  ASSERT_TRUE(listed.ok()) << listed.error();
  EXPECT_NE(listed->find(std::string(GRAINTUNE_CLI_DIR) + "/kubectl-graintune"), std::string::npos) << *listed;

  Result<std::string> status = RunTool(env + "kubectl graintune status -n team-plugin llama3-8b -o json");
  ASSERT_TRUE(status.ok()) << status.error();
  const Json j = Json::parse(*status);
  EXPECT_EQ(j["name"], "llama3-8b");
  EXPECT_EQ(j["trials"].size(), 3u);

  Result<std::string> help = RunTool(env + "kubectl graintune help");
  ASSERT_TRUE(help.ok()) << help.error();
  EXPECT_NE(help->find("usage: kubectl graintune COMMAND"), std::string::npos) << *help;
}

}  // namespace
}  // namespace graintune::testing
