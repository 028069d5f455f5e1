// SliceLap on the real node (label node-maxtext): the practice lap of one JAX job across two pods.
// graintune helm-installed from scripts/image.sh's images, a namespace whose policy asks for a
// training lap, and the tiny MaxText JobSet of maxtext_on_node_test as a run that checkpoints (so
// it keeps its value for its life, and its first attempt gets a lap), with two pods of two chips
// for the two hosts of one slice. The two pods run one jax.distributed job, as xpk starts a CPU
// workload (hardware=cpu, JOB_INDEX, JOB_COMPLETION_INDEX, PROCESSES_IN_JOB, JAX_PROCESS_COUNT,
// JAX_COORDINATOR_ADDRESS naming host 0): MaxText's initialize_jax_for_cpu joins host 0's pod
// address on port 1234 over the node's pod network. The node has no cluster DNS, so the test
// answers the one name xpk's JobSets resolve (ResolveInPods); the hosts share one output folder,
// as one JAX job's hosts share its bucket:
//   - the webhook wraps the container's `bash -c` script with graintune-launcher, which runs the
//     script's MaxText start as a lap (checkpointing off, its own output folder and metrics file)
//     with admission's value: the two laps initialize jax.distributed together, train, and exit;
//   - graintune's exporters report the laps; graintune's operator decides one value from both,
//     records it in the GrainTuning's status.lap and writes it on both pods
//     (graintune.dev/lap-value), which each launcher reads through the downward API;
//   - each trainer then initializes jax.distributed again on the same pods and port, starts with
//     that value (its Grain worker processes are counted from this machine's /proc) and reaches
//     its last step; each host reported the value it started with (status.lap.startedValues);
//     the output folder holds nothing of the lap;
//     the run is recorded with the laps' value, so a restart would resume with it;
//   - the lap compiled the trainer's own program (the webhook gave it the trainer's schedule);
//     status.lap.trainerCompile reports a host's verdict from the launcher's watch of its cache
//     folder (with one JAX job only process 0 writes that cache: see the check below).
//
// Needs what maxtext_on_node_test needs; fails, never skips, under GRAINTUNE_REQUIRE_CONTROLPLANE=1.
// It prints each host's value and the time from its lap's end to its trainer's start. It takes 3 to
// 4 minutes on 2 cores: a real node (kubelet, containerd, the chart's pods) comes up, and two
// hosts each run MaxText twice (the lap, then the trainer to its last step), each start a JAX
// import and compile (the trainer's compile from the lap's cache) on one core.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

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
constexpr int kHosts = 2;

// What the test saw of one host's trainer, the MaxText start after its lap: its Grain worker
// processes at most, its steps, and how long after its lap it started (read from /proc when the
// process is first seen, while it lives).
struct TrainerWatch {
  Json pod;
  int shell = 0, trainer = 0, most_workers = 0;
  size_t steps = 0;
  std::optional<double> started_after_lap;
  std::string seen;  // what the pod's processes looked like, for a failure's report

  std::string Name() const { return pod.value("/metadata/name"_json_pointer, std::string()); }

  // One look; true once the trainer wrote its last step.
  bool Poll(const NodeMaxTextPods& pods) {
    const std::string uid = pod.value("/metadata/uid"_json_pointer, std::string());
    if (shell == 0) shell = TrainerShellAfterLap(uid);
    if (shell != 0) {
      const std::map<int, ProcessSeen> tree = Descendants(shell);
      if (trainer == 0) {
        trainer = TrainerIn(tree, kMaxTextTrainerPattern);
        // The lap's last step ends the lap: from then to this start is what the answer took (the
        // slower host's lap, the scrape, the decision, the patch and the kubelet's refresh of
        // the downward-API file), of the 120 s the launcher waits.
        if (trainer != 0)
          started_after_lap = LapEndToTrainerSeconds(
              std::filesystem::path(pods.MetricsFile(pod)).replace_filename("lap.jsonl").string(), trainer);
      }
      const int workers = GrainWorkers(tree, kMaxTextTrainerPattern);
      most_workers = std::max(most_workers, workers);
      if (workers <= 0) {
        seen = "trainer shell " + std::to_string(shell) + ", Grain workers " + std::to_string(workers) + ":\n";
        for (const auto& [pid, p] : tree) seen += "  " + std::to_string(pid) + " <- " + std::to_string(p.ppid) + ": " + p.cmdline.substr(0, 160) + "\n";
      }
    } else {
      seen = "no trainer shell; the pod's bash processes: " + std::to_string(PodProcesses(uid, "bash").size());
    }
    steps = std::max(steps, ReadMaxTextMetricsFile(pods.MetricsFile(pod)).step_seconds.size());
    return static_cast<int>(steps) >= kTinySteps;
  }
};

// What the cluster, the trainers, the operator and the kubelet say, for a failure's report.
std::string FailureReport(ControlPlane& cp) {
  return "\n" + Text(cp.Kubectl({"get", "pods,jobs,jobsets,graintunings", "-A", "-o", "wide"})) +
         "\nlauncher and trainer:\n" +
         Text(cp.Kubectl({"logs", "-n", kNs, "-l", "graintune.dev/managed=true", "-c", "maxtext", "--tail", "40"})) +
         "\noperator:\n" +
         Text(cp.Kubectl({"logs", "-n", kReleaseNamespace, "-l", "app.kubernetes.io/component=operator", "--tail", "30"})) +
         "\nkubelet:\n" + TailOfFile(cp.real_node()->kubelet_log(), 1500);
}

// status.lap once answered: the pods' answer, the value every host's lap gave, its figures.
void ExpectLapStatus(const Json& lap, const std::string& answer, int admission) {
  EXPECT_EQ(lap.value("answer", ""), answer) << lap.dump(2);
  EXPECT_EQ(lap.value("admissionWorkers", 0), admission);
  EXPECT_EQ(answer, std::to_string(lap.value("workers", 0)));
  EXPECT_EQ(lap.value("hosts", 0), kHosts) << "the value is decided from every host's lap";
  EXPECT_GT(lap.value("stepSeconds", 0.0), 0);
  EXPECT_GT(lap.value("workerMemoryBytes", 0.0), 0);
}

// Watches each host's trainer (both together, as they run together) until each wrote its last
// step; expects each ran `value` Grain worker processes and prints how long after its lap it
// started. False when they did not all reach their last step.
bool ExpectTrainersStartWith(const NodeMaxTextPods& pods, const std::vector<Json>& attempt, int value) {
  std::vector<TrainerWatch> trainers;
  for (const Json& pod : attempt) trainers.push_back({.pod = pod});
  const bool trained = WaitFor([&] {
    bool all = true;
    for (TrainerWatch& t : trainers) all = t.Poll(pods) && all;
    return all;
  }, seconds(420));
  for (const TrainerWatch& t : trainers) {
    EXPECT_GE(static_cast<int>(t.steps), kTinySteps) << t.Name() << "'s trainer wrote " << t.steps << " steps";
    EXPECT_EQ(t.most_workers, value) << t.Name() << "'s Grain worker processes; " << t.seen;
    EXPECT_TRUE(t.started_after_lap) << t.Name() << ": no start time of its trainer (pid " << t.trainer << ")";
    if (t.started_after_lap) std::printf("%s: its trainer started %.1f s after its lap ended\n", t.Name().c_str(), *t.started_after_lap);
  }
  return trained;
}

// The slice's output folder holds the run's folder, with its checkpoints, and nothing of the lap.
void ExpectOutputFolderHoldsOnlyTheRun(const std::string& folder) {
  std::vector<std::string> outputs;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    outputs.push_back(it->path().filename().string());
  EXPECT_EQ(outputs, std::vector<std::string>{kJobSet}) << folder;
  EXPECT_TRUE(std::filesystem::exists(folder + "/" + kJobSet + "/checkpoints")) << folder;
}

TEST(SliceLapOnNode, OneJaxJobAcrossTwoPodsLapsThenEveryTrainerStartsWithTheLapsValue) {
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
  // Two pods of 8 GiB, each asking for half the node's chips: the two hosts of one attempt.
  const NodeMaxTextPods pods(*cp, *maxtext, images->test_ref, "8Gi");
  Result<TinyJobSetOptions> tiny = pods.Place({.ns = kNs, .name = kJobSet, .steps = kTinySteps, .pods = kHosts,
                                               .chips = 2, .jax_distributed = true,
                                               .extra_args = kTinyCheckpointing});
  ASSERT_TRUE(tiny.ok()) << tiny.error();
  auto on_failure = [&] { return FailureReport(*cp); };
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

  // Both hosts' laps run one JAX job; the operator answers them with one value on both pods, and
  // records it. Until host 0 has an address, its name does not resolve (MaxText retries every 5 s).
  std::vector<Json> attempt;
  const bool answered = WaitFor([&] {
    attempt = AttemptPods(*client, kNs, kJobSet, 0);
    if (static_cast<int>(attempt.size()) != kHosts) return false;
    (void)ResolveInPods(*cp->real_node(), attempt, CoordinatorName(*tiny));
    for (const Json& pod : attempt)
      if (PodAnnotation(pod, "graintune.dev/lap-value").empty()) return false;
    return true;
  }, seconds(360));
  ASSERT_TRUE(answered) << "no answer on both pods" << on_failure();
  const std::string answer = PodAnnotation(attempt[0], "graintune.dev/lap-value");
  EXPECT_EQ(PodAnnotation(attempt[1], "graintune.dev/lap-value"), answer) << "two hosts, two values";
  const int admission = WorkersOf(attempt[0]);
  std::printf("admission's value %d; the laps' answer on both pods: %s\n", admission, answer.c_str());
  const Json lap = tuning().value("/status/lap"_json_pointer, Json::object());
  ASSERT_TRUE(lap.contains("workers")) << "the laps of real MaxText gave no value: " << answer << on_failure();
  const int value = lap["workers"];
  ExpectLapStatus(lap, answer, admission);

  // Each host's trainer starts with the laps' value and reaches its last step.
  const bool trained = ExpectTrainersStartWith(pods, attempt, value);
  ASSERT_TRUE(trained) << "the trainers did not reach their last step" << on_failure();
  const bool ended = WaitFor([&] {
    const std::vector<Json> now = AttemptPods(*client, kNs, kJobSet, 0);
    return static_cast<int>(now.size()) == kHosts && std::all_of(now.begin(), now.end(), [](const Json& p) {
             return p.value("/status/phase"_json_pointer, std::string()) == "Succeeded";
           });
  }, seconds(120));
  EXPECT_TRUE(ended) << "the trainers did not end after their last step" << on_failure();

  // The output folder holds the run and nothing of the lap; the run keeps the laps' value, which
  // every host reported starting with.
  ExpectOutputFolderHoldsOnlyTheRun(tiny->out_dir);
  EXPECT_TRUE(WaitFor([&] {
    const Json lap_now = tuning().value("/status/lap"_json_pointer, Json::object());
    return lap_now.value("startedHosts", 0) == kHosts && lap_now.value("startedValues", Json::array()) == Json::array({value});
  }, seconds(60))) << tuning().value("/status/lap"_json_pointer, Json::object()).dump(2);
  EXPECT_TRUE(WaitFor([&] { return tuning().value("/status/runs/0/workers"_json_pointer, 0) == value; }, seconds(60)))
      << tuning().dump(2);
  // A verdict on the trainer's compile is reported. Not CacheHit on every host: JAX writes its
  // persistent compilation cache from process 0 only (jax/_src/compiler.py, _cache_write), so
  // with a cache folder per pod host 1's lap leaves nothing for host 1's trainer; the status
  // takes the first host's verdict that arrives (docs/practice-lap.md).
  EXPECT_TRUE(WaitFor([&] { return !tuning().value("/status/lap/trainerCompile"_json_pointer, std::string()).empty(); },
                      seconds(60)))
      << tuning().value("/status/lap"_json_pointer, Json::object()).dump(2);
  const Json told = tuning().value("/status/lap"_json_pointer, Json::object());
  std::printf("$ kubectl get graintuning -n %s %s -o jsonpath={.status.lap}\n%s\n", kNs, kJobSet, told.dump(2).c_str());

  cp.reset();
  ExpectHostAsBefore(before, cp_dir);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - test_start;
  std::printf("test took %.1f s\n", took.count());
}

}  // namespace
}  // namespace graintune::testing
