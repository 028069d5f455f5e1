// The practice lap's plumbing on the harness's real node (kubelet + containerd + runc), from the
// images scripts/image.sh builds out of the Dockerfile, with the pod spec the webhook writes
// (webhook/lap_injection.h: LauncherFlags and InjectLauncher on the trainer container):
//   - the installer init container copies graintune-launcher out of the graintune image into the
//     pod's emptyDir, and the launcher runs inside another image (graintune-test's shell);
//   - the lap runs first (the trainer's own command with the lap's words), then the answer
//     patched onto the pod's graintune.dev/lap-value annotation reaches the launcher through the
//     kubelet's downward-API file, and the trainer starts with that value; the time from the
//     patch to the trainer's start is printed (the kubelet refreshes the file on its pod sync);
//   - with no answer within the wait, the trainer starts with admission's value;
//   - a lap that takes its whole container down (as cgroup v2's group OOM kill does: every
//     process of the container SIGKILLed, the launcher too) restarts the container, and the
//     restart runs no second lap: it waits for the slice's answer as every host does, and with
//     none (no operator here) the trainer starts with admission's value.
// The trainer is a stand-in: a shell function named python3 that records each start's words in
// the container's termination message, so the script is read as MaxText's start by the webhook.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/controlplane/child_process.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/chart_on_node.h"
#include "tests/node/node_test_support.h"
#include "webhook/lap_injection.h"
#include "workload/container_overrides.h"

namespace graintune::testing {
namespace {

using kube::Json;
using std::chrono::seconds;

// Each start appends its words; a lap (checkpointing off) sleeps `lap_seconds` first (3 s, as a
// short lap would; 600 s: until it is killed). The stand-in `python3` is a file the script writes
// and puts first on PATH: a shell function there would be code graintune does not evaluate, which
// gets no lap (workload/script_constructs.h).
std::string TrainerScript(int lap_seconds) {
  return "printf '#!/bin/sh\\ncase \"$*\" in *enable_checkpointing=false*) sleep " + std::to_string(lap_seconds) +
         ";; esac\\necho \"$*\" >> /dev/termination-log\\n' > /tmp/python3; chmod +x /tmp/python3; "
         "PATH=/tmp:$PATH; python3 -m maxtext.trainers.pre_train.train base.yml steps=50 "
         "enable_checkpointing=true grain_worker_count=3";
}

// A pod on the real node whose trainer the webhook's lap injection wrapped.
Result<Json> LapPod(const std::string& name, const BuiltImages& images, int answer_wait_seconds,
                    const std::string& script = TrainerScript(3), const std::string& restart_policy = "Never") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"nodeSelector", {{"kubernetes.io/hostname", RealNode::kName}}},
                {"restartPolicy", restart_policy},
                {"terminationGracePeriodSeconds", 2},
                {"volumes", {{{"name", "graintune-metrics"}, {"emptyDir", Json::object()}}}},
                {"containers",
                 {{{"name", "trainer"},
                   {"image", images.test_ref},
                   {"imagePullPolicy", "Never"},
                   {"command", {"sh", "-c", script}},
                   {"volumeMounts", {{{"name", "graintune-metrics"}, {"mountPath", "/graintune-metrics"}}}}}}}}}};
  const webhook::LapInjection options{.image = images.ref};
  const Json& trainer = pod["spec"]["containers"][0];
  Result<std::vector<std::string>> flags = webhook::LauncherFlags(
      trainer, workload::ScanContainer(trainer),
      {.admission_value = 3, .steps = 5, .timeout_seconds = 300, .answer_wait_seconds = answer_wait_seconds},
      options);
  if (!flags.ok()) return flags.status();
  webhook::InjectLauncher(pod, "/spec", "/spec/containers/0", *flags, webhook::LauncherRole::kLap, options);
  pod["spec"]["initContainers"][0]["imagePullPolicy"] = "Never";
  return pod;
}

// The trainer's termination message once it ended ("" until then).
std::string EndedWith(kube::Client& client, const std::string& name, Json& pod) {
  kube::ApiResult<Json> p = client.Get(kube::resources::kPods, "default", name);
  if (!p.ok()) return "";
  pod = *p;
  const Json status = ContainerStatusOf(pod, "containerStatuses", "trainer");
  if (!status.is_object()) return "";
  const Json terminated = status.value("state", Json::object()).value("terminated", Json());
  return terminated.is_object() ? terminated.value("message", "(no message)") : "";
}

// The real node with graintune's chart installed from the built images, per test.
class LapOnNode : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<ControlPlaneOptions> env = NodeEnvironment();
    if (!env.ok()) SKIP_OR_FAIL_NODE(env.error());
    Result<BuiltImages> built = BuiltImagesFromEnvironment();
    if (!built.ok()) SKIP_OR_FAIL_NODE(built.error());
    images = *built;
    Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(WithChartImagesOnNode(*env, images));
    ASSERT_TRUE(started.ok()) << started.error();
    cp = std::move(started).value();
    client = cp->AdminClient();
  }

  // What a failure prints: the trainer's log of pod `name` and the kubelet's last lines.
  std::string OnFailure(const std::string& name) const {
    Result<std::string> logs = cp->Kubectl({"logs", "-n", "default", name, "-c", "trainer"});
    return "\ntrainer log:\n" + (logs.ok() ? *logs : logs.error()) + "\nkubelet:\n" +
           TailOfFile(cp->real_node()->kubelet_log(), 3000);
  }

  BuiltImages images;
  std::unique_ptr<ControlPlane> cp;
  std::shared_ptr<kube::Client> client;
};

TEST_F(LapOnNode, TheOperatorsAnswerReachesTheLauncherThroughTheKubeletsDownwardApiFile) {

  // Answered: the operator's value, patched onto the pod while its lap runs.
  Result<Json> answered = LapPod("lap-answered", images, /*answer_wait_seconds=*/240);
  ASSERT_TRUE(answered.ok()) << answered.error();
  ASSERT_TRUE(client->Create(kube::resources::kPods, "default", *answered).ok());
  Json pod;
  ASSERT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<Json> p = client->Get(kube::resources::kPods, "default", "lap-answered");
        if (p.ok()) pod = *p;
        return p.ok() && IsRunning(ContainerStatusOf(pod, "containerStatuses", "trainer"));
      },
      seconds(120)))
      << "the trainer never ran: " << pod.value("status", Json()).dump() << OnFailure("lap-answered");
  const Json installer = ContainerStatusOf(pod, "initContainerStatuses", webhook::kLauncherInstallerName);
  EXPECT_EQ(installer.value("state", Json::object()).value("terminated", Json::object()).value("exitCode", -1), 0)
      << installer.dump();
  const auto patched_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(client
                  ->Patch(kube::resources::kPods, "default", "lap-answered", kube::PatchType::kMerge,
                          {{"metadata", {{"annotations", {{webhook::kLapValueAnnotation, "5"}}}}}})
                  .ok());
  std::string message;
  ASSERT_TRUE(WaitFor([&] { return !(message = EndedWith(*client, "lap-answered", pod)).empty(); }, seconds(300)))
      << pod.value("status", Json()).dump() << OnFailure("lap-answered");
  const std::chrono::duration<double> answer_took = std::chrono::steady_clock::now() - patched_at;
  std::printf("the answer reached the trainer %.1f s after the patch (the lap had 3 s to run)\n",
              answer_took.count());
  // The lap with admission's 3 and the lap's words, then the trainer with the answer's 5.
  const size_t lap_line = message.find("grain_worker_count=3 steps=5 enable_checkpointing=false");
  const size_t trainer_line = message.find("grain_worker_count=5\n");
  EXPECT_NE(lap_line, std::string::npos) << message;
  EXPECT_NE(trainer_line, std::string::npos) << message;
  EXPECT_LT(lap_line, trainer_line) << message;

  // Unanswered: admission's value once the wait is over.
  Result<Json> unanswered = LapPod("lap-unanswered", images, /*answer_wait_seconds=*/10);
  ASSERT_TRUE(unanswered.ok()) << unanswered.error();
  ASSERT_TRUE(client->Create(kube::resources::kPods, "default", *unanswered).ok());
  ASSERT_TRUE(WaitFor([&] { return !(message = EndedWith(*client, "lap-unanswered", pod)).empty(); }, seconds(300)))
      << pod.value("status", Json()).dump() << OnFailure("lap-unanswered");
  EXPECT_NE(message.find("enable_checkpointing=true grain_worker_count=3\n"), std::string::npos) << message;
  EXPECT_EQ(message.find("grain_worker_count=5"), std::string::npos) << message;
}

TEST_F(LapOnNode, ALapThatTakesItsContainerDownRunsNoSecondLapAfterTheRestart) {
  const std::string name = "lap-restarted";

  Result<Json> lapped = LapPod(name, images, /*answer_wait_seconds=*/10, TrainerScript(600), "OnFailure");
  ASSERT_TRUE(lapped.ok()) << lapped.error();
  ASSERT_TRUE(client->Create(kube::resources::kPods, "default", *lapped).ok());
  // The lap has started once its marker is in the pod's emptyDir (the kubelet's folder on this
  // machine); then every process of the trainer's container is killed at once.
  Json pod;
  std::string marker;
  ASSERT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<Json> p = client->Get(kube::resources::kPods, "default", name);
        if (!p.ok()) return false;
        pod = *p;
        marker = cp->real_node()->PodVolumeDir(pod["metadata"].value("uid", ""), webhook::kLauncherVolumeName) +
                 "/lap.started";
        return IsRunning(ContainerStatusOf(pod, "containerStatuses", "trainer")) && std::filesystem::exists(marker);
      },
      seconds(120)))
      << "the lap never started: " << pod.value("status", Json()).dump() << OnFailure(name);
  const std::string id = ContainerStatusOf(pod, "containerStatuses", "trainer").value("containerID", "");
  const std::string prefix = "containerd://";
  ASSERT_TRUE(id.starts_with(prefix)) << id;
  ASSERT_TRUE(cp->real_node()->KillContainer(id.substr(prefix.size())).ok());

  // The killed container's end shows first; the restarted one's is the one that counts.
  std::string message;
  ASSERT_TRUE(WaitFor(
      [&] {
        message = EndedWith(*client, name, pod);
        return !message.empty() && ContainerStatusOf(pod, "containerStatuses", "trainer").value("restartCount", 0) >= 1;
      },
      seconds(300)))
      << pod.value("status", Json()).dump() << OnFailure(name);
  const Json trainer = ContainerStatusOf(pod, "containerStatuses", "trainer");
  EXPECT_GE(trainer.value("restartCount", 0), 1) << trainer.dump();
  EXPECT_EQ(trainer.value("lastState", Json::object()).value("terminated", Json::object()).value("exitCode", -1), 137)
      << trainer.dump();
  // The restarted container: the trainer alone, with admission's 3, and no lap words.
  EXPECT_NE(message.find("base.yml steps=50 enable_checkpointing=true grain_worker_count=3\n"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("enable_checkpointing=false"), std::string::npos) << message;
  Result<std::string> log = cp->Kubectl({"logs", "-n", "default", name, "-c", "trainer"});
  ASSERT_TRUE(log.ok()) << log.error();
  EXPECT_NE(log->find("no second lap: a lap already started in this pod"), std::string::npos) << *log;
  EXPECT_NE(log->find("starting the trainer: 3 workers, admission's value: no answer from graintune's operator"),
            std::string::npos)
      << *log;
}

}  // namespace
}  // namespace graintune::testing
