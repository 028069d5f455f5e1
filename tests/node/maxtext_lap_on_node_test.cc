// The practice lap with real MaxText on the real node (labels node and maxtext): graintune
// helm-installed from scripts/image.sh's images, a namespace whose policy asks for a training
// lap, and the tiny MaxText JobSet of maxtext_on_node_test as a run that checkpoints (so it keeps
// its value for its life, and its first attempt gets a lap):
//   - the webhook wraps the container's `bash -c` script with graintune-launcher, which runs the
//     script's MaxText start as a lap (checkpointing off, its own output folder and metrics file)
//     with admission's value;
//   - graintune's exporter reports the lap; graintune's operator decides the run's value from it,
//     records it in the GrainTuning's status.lap and writes it on the pod
//     (graintune.dev/lap-value), which the launcher reads through the downward API;
//   - the trainer then starts with that value (its Grain worker processes are counted from this
//     machine's /proc) and reaches its last step; the run's output folder holds nothing of the
//     lap; the run is recorded with the lap's value, so a restart would resume with it.
//
// Needs what maxtext_on_node_test needs; fails, never skips, under GRAINTUNE_REQUIRE_CONTROLPLANE=1.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/controlplane/host_footprint.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/real_node.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/chart_on_node.h"
#include "tests/node/node_lap.h"
#include "tests/node/node_maxtext_pods.h"
#include "tests/node/node_test_support.h"
#include "tests/node/node_workloads.h"

namespace graintune::testing {
namespace {

using kube::Json;
using std::chrono::seconds;

constexpr char kNs[] = "maxtext-lap";
constexpr char kJobSet[] = "tiny";

TEST(MaxTextLapOnNode, TheFirstAttemptsTrainerStartsWithTheValueItsLapGave) {
  const auto test_start = std::chrono::steady_clock::now();
  Result<ControlPlaneOptions> env = NodeEnvironment();
  if (!env.ok()) SKIP_OR_FAIL_NODE(env.error());
  Result<BuiltImages> images = BuiltImagesFromEnvironment();
  if (!images.ok()) SKIP_OR_FAIL_NODE(images.error());
  const std::optional<MaxTextEnv> maxtext = MaxTextFromEnvironment();
  if (!maxtext) SKIP_OR_FAIL_NODE("GRAINTUNE_MAXTEXT_* are not set (scripts/test.sh exports them)");
  const HostFootprint before = CaptureHostFootprint();
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(WithChartImagesOnNode(*env, *images));
  ASSERT_TRUE(started.ok()) << started.error();
  std::unique_ptr<ControlPlane> cp = std::move(started).value();
  const std::string cp_dir = cp->dir();
  std::shared_ptr<kube::Client> client = cp->AdminClient();
  const NodeMaxTextPods pods(*cp, *maxtext, images->test_ref);
  Result<TinyJobSetOptions> tiny =
      pods.Place({.ns = kNs, .name = kJobSet, .steps = kTinySteps, .extra_args = kTinyCheckpointing});
  ASSERT_TRUE(tiny.ok()) << tiny.error();
  auto on_failure = [&] {
    return "\n" + Text(cp->Kubectl({"get", "pods,jobs,jobsets,graintunings", "-A", "-o", "wide"})) +
           "\nlauncher and trainer:\n" +
           Text(cp->Kubectl({"logs", "-n", kNs, "-l", "graintune.dev/managed=true", "-c", "maxtext", "--tail", "40"})) +
           "\noperator:\n" +
           Text(cp->Kubectl({"logs", "-n", kReleaseNamespace, "-l", "app.kubernetes.io/component=operator", "--tail", "30"})) +
           "\nkubelet:\n" + TailOfFile(cp->real_node()->kubelet_log(), 1500);
  };
  auto tuning = [&] {
    kube::ApiResult<Json> gt = client->Get(kube::resources::kGrainTunings, kNs, kJobSet);
    return gt.ok() ? *gt : Json::object();
  };

  const Status installed =
      HelmInstallOnNode(*cp, std::string(GRAINTUNE_SOURCE_DIR) + "/charts/graintune", images->ref);
  ASSERT_TRUE(installed.ok()) << installed.message() << on_failure();
  ASSERT_TRUE(CreateNamespaceWithPolicy(*cp, kNs, 2).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, LapPolicy(kNs, 2)).ok());
  Result<std::string> applied = cp->Kubectl({"apply", "-f", "-"}, TinyMaxTextJobSet(*maxtext, *tiny));
  ASSERT_TRUE(applied.ok()) << applied.error();

  // The lap runs, the operator answers it on the pod and records it.
  Json pod;
  const bool answered = WaitFor([&] {
    const std::vector<Json> attempt = AttemptPods(*client, kNs, kJobSet, 0);
    if (attempt.size() != 1 || PodAnnotation(attempt[0], "graintune.dev/lap-value").empty()) return false;
    pod = attempt[0];
    return true;
  }, seconds(480));
  ASSERT_TRUE(answered) << "no answer on the pod" << on_failure();
  const std::string answer = PodAnnotation(pod, "graintune.dev/lap-value");
  const int admission = WorkersOf(pod);
  std::printf("admission's value %d; the lap's answer: %s\n", admission, answer.c_str());
  const Json lap = tuning().value("/status/lap"_json_pointer, Json::object());
  EXPECT_EQ(lap.value("answer", ""), answer) << tuning().dump(2);
  EXPECT_EQ(lap.value("admissionWorkers", 0), admission);
  ASSERT_TRUE(lap.contains("workers")) << "the lap of real MaxText gave no value: " << answer << on_failure();
  const int value = lap["workers"];
  EXPECT_EQ(answer, std::to_string(value));
  EXPECT_EQ(lap.value("hosts", 0), 1);
  EXPECT_GT(lap.value("stepSeconds", 0.0), 0);
  EXPECT_GT(lap.value("workerMemoryBytes", 0.0), 0);

  // The trainer starts with the lap's value and reaches its last step.
  const std::string uid = pod.value("/metadata/uid"_json_pointer, std::string());
  int most_workers = 0, shell = 0, polls = 0;
  std::string seen;  // what the pod's processes looked like, for a failure's report
  MetricsFileRead read;
  const bool trained = WaitFor([&] {
    ++polls;
    if (shell == 0) shell = TrainerShellAfterLap(uid);
    if (shell != 0) {
      const std::map<int, ProcessSeen> tree = Descendants(shell);
      const int workers = GrainWorkers(tree, kMaxTextTrainerPattern);
      most_workers = std::max(most_workers, workers);
      if (workers <= 0) {
        seen = "trainer shell " + std::to_string(shell) + ", Grain workers " + std::to_string(workers) + ":\n";
        for (const auto& [pid, p] : tree) seen += "  " + std::to_string(pid) + " <- " + std::to_string(p.ppid) + ": " + p.cmdline.substr(0, 160) + "\n";
      }
    } else {
      seen = "no trainer shell; the pod's bash processes: " + std::to_string(PodProcesses(uid, "bash").size());
    }
    read = ReadMaxTextMetricsFile(pods.MetricsFile(pod));
    return static_cast<int>(read.step_seconds.size()) >= kTinySteps;
  }, seconds(480));
  ASSERT_TRUE(trained) << "the trainer wrote " << read.step_seconds.size() << " steps" << on_failure();
  EXPECT_EQ(most_workers, value) << "Grain worker processes of the trainer, over " << polls << " looks; " << seen;
  const bool ended = WaitFor([&] {
    const std::vector<Json> attempt = AttemptPods(*client, kNs, kJobSet, 0);
    return attempt.size() == 1 && attempt[0].value("/status/phase"_json_pointer, std::string()) == "Succeeded";
  }, seconds(120));
  EXPECT_TRUE(ended) << "the trainer did not end after its last step" << on_failure();

  // The run's output folder holds the run and nothing of the lap; the run keeps the lap's value.
  std::vector<std::string> outputs;
  for (const auto& entry : std::filesystem::directory_iterator(tiny->out_dir))
    outputs.push_back(entry.path().filename().string());
  EXPECT_EQ(outputs, std::vector<std::string>{kJobSet}) << tiny->out_dir;
  EXPECT_TRUE(std::filesystem::exists(tiny->out_dir + "/" + kJobSet + "/checkpoints"));
  EXPECT_TRUE(WaitFor([&] { return tuning().value("/status/runs/0/workers"_json_pointer, 0) == value; }, seconds(60)))
      << tuning().dump(2);
  std::printf("$ kubectl get graintuning -n %s %s -o jsonpath={.status.lap}\n%s\n", kNs, kJobSet,
              tuning().value("/status/lap"_json_pointer, Json::object()).dump(2).c_str());

  cp.reset();
  ExpectHostAsBefore(before, cp_dir);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - test_start;
  std::printf("test took %.1f s\n", took.count());
}

}  // namespace
}  // namespace graintune::testing
