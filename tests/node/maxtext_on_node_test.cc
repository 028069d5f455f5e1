// Real MaxText in a real pod (labels node and maxtext): graintune helm-installed on the
// harness's real node (kubelet + containerd + runc) from scripts/image.sh's images, and an
// xpk-style one-host JobSet whose container runs MaxText's own trainer (maxtext 0.2.5 on this
// machine's CPU, the tiny model on a pipeline that tokenizes 512 KiB records, so data loading
// binds) with grain_worker_count=-1:
//   - the API server calls the webhook, which rewrites the -1 in the container's `bash -c`
//     script and injects the exporter sidecar (the graintune image) and the metrics emptyDir;
//   - the kubelet runs the container: bash runs exactly the rewritten command, MaxText starts
//     that many Grain worker processes (counted in the pod's cgroup from this machine's /proc)
//     and its own metric logger writes the metrics file into the emptyDir;
//   - the exporter, sharing the pod's PID namespace, follows the file and counts the workers;
//     the operator scrapes the pod's IP and records the trial;
//   - the trainer is killed (SIGKILL: the pod fails, exit 137), JobSet restarts the slice, and
//     the restarted pod runs the recommendation, which MaxText again runs as Grain workers.
//
// The container image is the test image (Debian with bash); the pinned MaxText environment
// (scripts/lib/maxtext_trainer.sh: the venv, the Python it was made from, the records and the
// tokenizer) is this machine's, mounted read-only by hostPath at the same paths (OnRealNode), so
// a 1.5 GB environment is not copied into an image. The trainer runs until the test has the
// steps it needs and is then stopped (SIGSTOP) so the file, the exporter and the trial can be
// compared on a fixed set of steps.
//
// Needs what the node tests need (root, the kubelet, containerd, the image archives) and the
// GRAINTUNE_MAXTEXT_* variables; it fails, never skips, under GRAINTUNE_REQUIRE_CONTROLPLANE=1.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "operator/exporter_scraper.h"
#include "operator/pod_facts.h"
#include "tests/controlplane/host_footprint.h"
#include "tests/controlplane/maxtext_attempt.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/real_node.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/chart_on_node.h"
#include "tests/node/node_maxtext_pods.h"
#include "tests/node/node_test_support.h"
#include "tests/node/node_workloads.h"
#include "tuner/trial.h"

namespace graintune::testing {
namespace {

using kube::Json;
using std::chrono::seconds;

constexpr char kNs[] = "maxtext";
constexpr char kJobSet[] = "tiny";
// MaxText is told to train far longer than the test waits: the test stops it once the file
// holds kTinySteps steps.
constexpr int kStepsAsked = 1000;

class MaxTextOnNode : public ::testing::Test {
 protected:
  // Waits for `attempt`'s pod and its trainer, counts its Grain processes while MaxText
  // trains, and once the file holds kTinySteps steps stops the trainer (SIGSTOP) and reads
  // the file and the exporter's /steps. Returns the trainer's pid (0 on a fatal failure).
  // `on_started` runs once the trainer is there.
  int RunAttempt(ControlPlane& cp, const NodeMaxTextPods& pods, int attempt, MaxTextAttemptSeen& seen,
                 const std::function<std::string()>& on_failure,
                 const std::function<void()>& on_started = [] {}) {
    std::shared_ptr<kube::Client> client = cp.AdminClient();
    Json pod = WaitForAttemptPod(
        *client, kNs, kJobSet, attempt,
        [](const Json& p) {
          return IsRunning(ContainerStatusOf(p, "containerStatuses", "maxtext")) &&
                 IsRunning(ContainerStatusOf(p, "initContainerStatuses", "graintune-exporter")) &&
                 !p["status"].value("podIP", "").empty();
        },
        seconds(120));
    EXPECT_FALSE(pod.is_null()) << on_failure();
    if (pod.is_null()) return 0;
    std::printf("attempt %d running:\n%s", attempt, DescribeStatuses(pod).c_str());
    seen.pod = pod["metadata"].value("name", "");
    seen.workers = WorkerCountOf(pod);
    seen.command = ScriptOf(pod, "maxtext");
    const std::string uid = pod["metadata"].value("uid", "");
    const std::string file = pods.MetricsFile(pod);
    const op::PodFacts facts = op::PodFactsFromJson(pod);
    auto exporter_steps = [&] { return op::FetchExporterSteps(facts, op::ScraperOptions{}, std::stop_token{}); };
    auto logs = [&] { return pods.LogTail(pod) + on_failure(); };

    PodTrainer running;
    MetricsFileRead read;
    std::string ended_early;  // the container's log, when MaxText ended before its steps
    const bool trained = WaitFor(
        [&] {
          if (running.shell != 0 && ProcessEnded(running.shell)) {
            ended_early = pods.LogTail(pod);
            return true;
          }
          if (running.shell == 0) {
            running = FindPodTrainer(uid, "bash", kMaxTextTrainerPattern);
            if (running.shell == 0) return false;
            on_started();
          }
          seen.most_grain_processes =
              std::max(seen.most_grain_processes, GrainWorkers(Descendants(running.shell), kMaxTextTrainerPattern));
          if (Result<telemetry::StepsDocument> doc = exporter_steps(); doc.ok() && doc->process)
            seen.exporter_workers = std::max(seen.exporter_workers, doc->process->workers);
          read = ReadMaxTextMetricsFile(file);
          return static_cast<int>(read.step_seconds.size()) >= kTinySteps;
        },
        seconds(480));
    EXPECT_TRUE(trained && ended_early.empty())
        << "MaxText wrote " << read.step_seconds.size() << " steps to " << file << " (trainer pid "
        << running.trainer << ")\n" << (ended_early.empty() ? logs() : "it ended:\n" + ended_early + on_failure());
    if (!trained || !ended_early.empty()) return 0;
    // Frozen, MaxText writes no more lines: the file, the exporter and the trial can agree.
    EXPECT_EQ(::kill(running.trainer, SIGSTOP), 0);
    read = ReadMaxTextMetricsFile(file);
    seen.lines = read.lines;
    seen.malformed = static_cast<int>(read.malformed.size());
    for (const std::string& m : read.malformed) ADD_FAILURE() << "MaxText wrote a line graintune cannot read: " << m;
    seen.step_seconds = read.step_seconds;
    std::string last_answer;
    const bool exported = WaitFor(
        [&] {
          Result<telemetry::StepsDocument> doc = exporter_steps();
          last_answer = doc.ok() ? std::to_string(doc->steps.size()) + " steps" : doc.error();
          if (!doc.ok() || doc->steps.size() != seen.step_seconds.size()) return false;
          seen.exporter_malformed = doc->malformed_lines;
          return true;
        },
        seconds(30));
    EXPECT_TRUE(exported) << seen.step_seconds.size() << " steps in the file; the exporter's /steps: "
                          << last_answer << on_failure();
    std::printf("attempt %d: MaxText's log:\n%s\n", attempt, pods.LogTail(pod).c_str());
    return exported ? running.trainer : 0;
  }
};

TEST_F(MaxTextOnNode, RealMaxTextInAPodRunsGraintunesValueAndItsRestartRunsTheRecommendation) {
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
  Result<TinyJobSetOptions> tiny = pods.Place({.ns = kNs, .name = kJobSet, .steps = kStepsAsked});
  ASSERT_TRUE(tiny.ok()) << tiny.error();
  auto on_failure = [&] {
    return "\n" + Text(cp->Kubectl({"get", "pods,jobs,jobsets,graintunings", "-A", "-o", "wide"})) +
           "\nexporter:\n" +
           Text(cp->Kubectl({"logs", "-n", kNs, "-l", "graintune.dev/managed=true", "-c", "graintune-exporter",
                             "--tail", "20", "--prefix"})) +
           "\nkubelet:\n" + TailOfFile(cp->real_node()->kubelet_log(), 2000);
  };
  auto tuning = [&] {
    kube::ApiResult<Json> gt = client->Get(kube::resources::kGrainTunings, kNs, kJobSet);
    return gt.ok() ? *gt : Json::object();
  };

  const Status installed =
      HelmInstallOnNode(*cp, std::string(GRAINTUNE_SOURCE_DIR) + "/charts/graintune", images->ref);
  ASSERT_TRUE(installed.ok()) << installed.message() << on_failure();
  // Attempt 0 starts deliberately low: one Grain worker cannot keep up with this pipeline.
  ASSERT_TRUE(CreateNamespaceWithPolicy(*cp, kNs, 1).ok());
  Result<std::string> applied = cp->Kubectl({"apply", "-f", "-"}, TinyMaxTextJobSet(*maxtext, *tiny));
  ASSERT_TRUE(applied.ok()) << applied.error();

  // Attempt 0: graintune's value, capped at 1, is what MaxText runs. Once it runs, the platform
  // lifts the cap: the trial, not the policy, decides attempt 1.
  MaxTextAttemptSeen a0;
  const int trainer0 = RunAttempt(*cp, pods, 0, a0, on_failure, [&] {
    EXPECT_TRUE(cp->Kubectl({"apply", "-f", "-"}, NamespacePolicy(kNs, 64)).ok());
  });
  ASSERT_NE(trainer0, 0);
  EXPECT_EQ(a0.workers, 1);
  ExpectRanItsValue(a0);

  // The trial the operator stored has every steady sample of the file and a verdict the steps
  // allow, and the recommendation is for attempt 1.
  Result<Trial> whole = SummarizeSteps(a0.step_seconds, 1.0, kOperatorWarmupSteps);
  ASSERT_TRUE(whole.ok()) << whole.error();
  Json trial0;
  ASSERT_TRUE(WaitFor([&] {
    const Json gt = tuning();
    trial0 = gt.value("/status/trials/0"_json_pointer, Json::object());
    // Its samples may be complete before its mean is: the operator's last scrape before the
    // freeze could lack the final step while the samples already number the most it keeps.
    return trial0.value("samples", 0) == whole->samples &&
           std::abs(trial0.value("stepTimeMeanSeconds", 0.0) - whole->step_seconds_mean) <= 0.0006 &&
           gt.value("/status/recommendation/attempt"_json_pointer, 0) == 1;
  }, seconds(60))) << tuning().dump(2) << on_failure();
  EXPECT_EQ(trial0.value("workers", 0), a0.workers);
  ExpectTheVerdictTheStepsImply(trial0, *whole);
  // The start check ran in the real pod (graintune-launcher in MaxText's own image): MaxText's
  // loader read the start, and the operator recorded what it saw, which `graintune status` prints.
  Json check;
  ASSERT_TRUE(WaitFor([&] {
    check = tuning().value("/status/startCheck"_json_pointer, Json());
    return check.is_object();
  }, seconds(60))) << tuning().dump(2) << on_failure();
  EXPECT_EQ(check.value("attempt", -1), 0) << check.dump();
  EXPECT_EQ(check.value("checked", false), true) << check.dump();
  EXPECT_EQ(check.value("startedWorkers", -1), a0.workers) << check.dump();
  EXPECT_EQ(check.value("writtenWorkers", -1), a0.workers) << check.dump();
  EXPECT_EQ(check.value("datasetType", ""), "grain") << check.dump();
  std::printf("start check in the pod: %s\n", check.dump().c_str());
  EXPECT_NEAR(trial0.value("stepTimeMeanSeconds", 0.0), whole->step_seconds_mean, 0.0006);

  // The recommendation as a restart reads it: the trial no longer changes.
  SettledRecommendation for_attempt_1(1);
  ASSERT_TRUE(WaitFor([&] { return for_attempt_1.Settled(tuning().value("status", Json::object())); }, seconds(60)))
      << tuning().dump(2);

  // The trainer dies (SIGKILL: exit 137); the pod fails, backoffLimit 0 fails the Job, and
  // JobSet restarts the slice as attempt 1, which runs the recommendation.
  ASSERT_EQ(::kill(trainer0, SIGKILL), 0);
  MaxTextAttemptSeen a1;
  const int trainer1 = RunAttempt(*cp, pods, 1, a1, on_failure);
  ASSERT_NE(trainer1, 0);
  EXPECT_EQ(a1.workers, for_attempt_1.workers()) << "the restart runs the recommendation\n" << tuning().dump(2);
  ExpectRanItsValue(a1);
  Result<Trial> whole1 = SummarizeSteps(a1.step_seconds, 1.0, kOperatorWarmupSteps);
  ASSERT_TRUE(whole1.ok()) << whole1.error();
  Json gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = tuning();
    return gt.value("/status/trials/1/samples"_json_pointer, 0) == whole1->samples &&
           std::abs(gt.value("/status/trials/1/stepTimeMeanSeconds"_json_pointer, 0.0) - whole1->step_seconds_mean) <=
               0.0006;
  }, seconds(60))) << tuning().dump(2);
  EXPECT_EQ(gt.value("/status/trials/1/workers"_json_pointer, -1), a1.workers);
  ExpectTheVerdictTheStepsImply(gt.value("/status/trials/1"_json_pointer, Json::object()), *whole1);
  ::kill(trainer1, SIGKILL);
  std::printf("\nattempt 0: %d workers (%d Grain processes counted), attempt 1: %d (%d counted)\n",
              a0.workers, a0.most_grain_processes, a1.workers, a1.most_grain_processes);
  std::printf("$ kubectl get graintuning -n %s %s -o jsonpath={.status}\n%s\n", kNs, kJobSet,
              gt.value("status", Json::object()).dump(2).c_str());

  // Stopped, the host is as it was.
  cp.reset();
  ExpectHostAsBefore(before, cp_dir);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - test_start;
  std::printf("test took %.1f s\n", took.count());
}

}  // namespace
}  // namespace graintune::testing
