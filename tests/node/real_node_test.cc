// The harness's real node (tests/controlplane/real_node.h) beside a KWOK TPU node: it registers
// Ready with the labels and google.com/tpu capacity of a single-host TPU VM, runs real pods (a
// native sidecar stays Running while the main container runs; a memory hog over its limit as
// PID 1 is OOMKilled with exit code 137; `kubectl logs` reaches the kubelet), and after the
// control plane stops nothing on the host differs from before: sysctls, iptables chains, host
// folders, cgroups, mounts, processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/host_footprint.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tests/controlplane/wait_for.h"
#include "tests/node/node_images.h"
#include "tests/node/node_test_support.h"

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// Processes whose command line names `dir`: what a node in that folder could leave running.
std::vector<std::string> ProcessesNaming(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid())) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::stringstream cmdline;
    cmdline << in.rdbuf();
    std::string text = cmdline.str();
    for (char& c : text)
      if (c == '\0') c = ' ';
    if (text.find(dir) != std::string::npos) out.push_back(pid + ": " + text);
  }
  return out;
}

kube::Json ToolContainer(const std::string& name, const std::vector<std::string>& args) {
  return {{"name", name}, {"image", kToolImage}, {"imagePullPolicy", "Never"}, {"args", args}};
}

kube::Json NodePod(const std::string& name, kube::Json spec, bool host_network = false) {
  spec["nodeSelector"] = {{"kubernetes.io/hostname", RealNode::kName}};
  spec["hostNetwork"] = host_network;
  spec["restartPolicy"] = "Never";
  spec["terminationGracePeriodSeconds"] = 2;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

std::string Quantity(const kube::Json& node, const std::string& list, const std::string& key) {
  return node.value("status", kube::Json::object())
      .value(list, kube::Json::object())
      .value(key, "");
}

std::string ReadyHeartbeat(const kube::Json& node) {
  for (const kube::Json& c :
       node.value("status", kube::Json::object()).value("conditions", kube::Json::array()))
    if (c.value("type", "") == "Ready") return c.value("lastHeartbeatTime", "");
  return "";
}

std::string Listed(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

TEST(RealNode, RunsPodsLikeATpuHostAndLeavesTheHostAsItWas) {
  const auto test_start = std::chrono::steady_clock::now();
  Result<ControlPlaneOptions> env = NodeEnvironment();
  if (!env.ok()) SKIP_OR_FAIL_NODE(env.error());

  const HostFootprint before = CaptureHostFootprint();
  char images_dir[] = "/tmp/graintune-node-images-XXXXXX";
  ASSERT_NE(::mkdtemp(images_dir), nullptr);
  Result<RealNodeOptions> node_options = TestNodeOptions(GRAINTUNE_NODE_TOOL_BIN, images_dir);
  ASSERT_TRUE(node_options.ok()) << node_options.error();
  ControlPlaneOptions options = *env;
  options.kwok = true;
  options.kwok_stages_file = GRAINTUNE_KWOK_STAGES_FILE;
  options.real_node = *node_options;
  Result<std::unique_ptr<ControlPlane>> started = ControlPlane::Start(options);
  fs::remove_all(images_dir);
  ASSERT_TRUE(started.ok()) << started.error();
  std::unique_ptr<ControlPlane> cp = std::move(started).value();
  const std::string cp_dir = cp->dir();
  std::fprintf(stderr, "real node Ready %.1f s after its start\n",
               cp->real_node()->seconds_to_ready());
  std::shared_ptr<kube::Client> client = cp->AdminClient();

  // Beside a KWOK TPU node, with the same TPU labels and the machine type's chips.
  Result<kube::Json> kwok_node = TpuNode({.name = "tpu-kwok-0", .topology = "2x2"});
  ASSERT_TRUE(kwok_node.ok());
  ASSERT_TRUE(client->Create(kube::resources::kNodes, "", *kwok_node).ok());
  kube::ApiResult<kube::Json> node = client->Get(kube::resources::kNodes, "", RealNode::kName);
  ASSERT_TRUE(node.ok());
  const kube::Json labels = (*node)["metadata"]["labels"];
  for (const char* key : {"node.kubernetes.io/instance-type",
                          "cloud.google.com/gke-tpu-accelerator",
                          "cloud.google.com/gke-tpu-topology"})
    EXPECT_EQ(labels.value(key, ""), (*kwok_node)["metadata"]["labels"].value(key, "")) << key;
  EXPECT_EQ(labels.value("cloud.google.com/gke-tpu-topology", ""), "2x2");
  EXPECT_EQ(Quantity(*node, "capacity", "google.com/tpu"), "4");
  EXPECT_EQ(Quantity(*node, "allocatable", "google.com/tpu"), "4");

  // The kubelet's next full status update keeps the patched extended resource.
  const std::string heartbeat = ReadyHeartbeat(*node);
  EXPECT_TRUE(WaitFor(
      [&] {
        node = client->Get(kube::resources::kNodes, "", RealNode::kName);
        return node.ok() && ReadyHeartbeat(*node) != heartbeat;
      },
      seconds(40)))
      << "no status update from the kubelet";
  EXPECT_EQ(Quantity(*node, "capacity", "google.com/tpu"), "4");
  EXPECT_EQ(Quantity(*node, "allocatable", "google.com/tpu"), "4");

  // A native sidecar (an init container with restartPolicy Always) runs beside the main
  // container, and the pod still completes when the main container does.
  kube::Json sidecar = ToolContainer("exporter", {"listen", "9431"});
  sidecar["restartPolicy"] = "Always";
  ASSERT_TRUE(client
                  ->Create(kube::resources::kPods, "default",
                           NodePod("sidecar", {{"initContainers", {sidecar}},
                                               {"containers",
                                                {ToolContainer("trainer", {"sleep", "10"})}}}))
                  .ok());
  kube::Json pod;
  EXPECT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<kube::Json> p = client->Get(kube::resources::kPods, "default", "sidecar");
        if (p.ok()) pod = *p;
        return p.ok() && IsRunning(ContainerStatusOf(pod, "containerStatuses", "trainer")) &&
               IsRunning(ContainerStatusOf(pod, "initContainerStatuses", "exporter"));
      },
      seconds(60)))
      << "sidecar and trainer never ran together: " << pod.value("status", kube::Json()).dump()
      << "\nkubelet log:\n" << TailOfFile(cp->real_node()->kubelet_log());
  const kube::Json exporter = ContainerStatusOf(pod, "initContainerStatuses", "exporter");
  EXPECT_TRUE(exporter.is_object() && exporter.value("started", false)) << exporter.dump();
  EXPECT_EQ(pod["status"].value("phase", ""), "Running");
  // On the pod network, and reached from this machine over the pod's IP.
  const std::string pod_ip = pod["status"].value("podIP", "");
  EXPECT_EQ(pod_ip.rfind("10.213.0.", 0), 0u) << pod_ip;
  Result<std::string> answer =
      RunShell("bash -c 'exec 3<>/dev/tcp/" + pod_ip + "/9431 && cat <&3'", "a TCP connection");
  EXPECT_TRUE(answer.ok() && *answer == "node-tool\n") << (answer.ok() ? *answer : answer.error());
  EXPECT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<kube::Json> p = client->Get(kube::resources::kPods, "default", "sidecar");
        if (p.ok()) pod = *p;
        return p.ok() && pod["status"].value("phase", "") == "Succeeded";
      },
      seconds(60)))
      << "the pod did not complete: " << pod.value("status", kube::Json()).dump();

  // A container over its memory limit, as PID 1, is OOMKilled with exit code 137.
  kube::Json hog = ToolContainer("hog", {"hog", "256"});
  hog["resources"] = {{"limits", {{"memory", "32Mi"}}}};
  ASSERT_TRUE(client
                  ->Create(kube::resources::kPods, "default",
                           NodePod("hog", {{"containers", {hog}}}, /*host_network=*/true))
                  .ok());
  kube::Json terminated;
  EXPECT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<kube::Json> p = client->Get(kube::resources::kPods, "default", "hog");
        if (!p.ok()) return false;
        pod = *p;
        const kube::Json status = ContainerStatusOf(pod, "containerStatuses", "hog");
        if (!status.is_object()) return false;
        terminated = status.value("state", kube::Json::object()).value("terminated", kube::Json());
        return terminated.is_object();
      },
      seconds(60)))
      << "the hog never ended: " << pod.value("status", kube::Json()).dump();
  EXPECT_EQ(terminated.value("reason", ""), "OOMKilled") << terminated.dump();
  EXPECT_EQ(terminated.value("exitCode", 0), 137) << terminated.dump();
  // The API server reaches the kubelet (serving certificate for localhost, client certificate).
  Result<std::string> logs = cp->Kubectl({"logs", "-n", "default", "hog"});
  ASSERT_TRUE(logs.ok()) << logs.error();
  EXPECT_NE(logs->find("node-tool: touching 256 MiB"), std::string::npos) << *logs;

  // Stopped, the host is as it was.
  cp.reset();
  ExpectHostAsBefore(before, cp_dir);
  EXPECT_EQ(ProcessesNaming(cp_dir), std::vector<std::string>{});
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - test_start;
  std::fprintf(stderr, "test took %.1f s\n", took.count());
}

// A test run killed outright (SIGKILL: no destructor runs) leaves containerd's shims and their
// containers running, with their mounts and cgroups, and the kubelet's sysctls; the next control
// plane's start sweeps it all and restores the host from the footprint the dead run saved.
TEST(RealNode, TheNextStartSweepsWhatAKilledRunLeft) {
  Result<ControlPlaneOptions> env = NodeEnvironment();
  if (!env.ok()) SKIP_OR_FAIL_NODE(env.error());
  const HostFootprint before = CaptureHostFootprint();
  char log_dir[] = "/tmp/graintune-node-holder-XXXXXX";
  ASSERT_NE(::mkdtemp(log_dir), nullptr);
  const std::string log = std::string(log_dir) + "/holder.log";
  Result<ChildProcess> holder =
      ChildProcess::Spawn({GRAINTUNE_REAL_NODE_HOLDER_BIN, GRAINTUNE_NODE_TOOL_BIN}, log);
  ASSERT_TRUE(holder.ok()) << holder.error();
  std::string cp_dir;
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string text = TailOfFile(log, 100000);
        const size_t at = text.find("ready ");
        if (at != std::string::npos) cp_dir = text.substr(at + 6, text.find('\n', at) - at - 6);
        return !cp_dir.empty() || !holder->Running();
      },
      seconds(180)));
  ASSERT_FALSE(cp_dir.empty()) << "the holder did not start its node:\n" << TailOfFile(log);
  fs::remove_all(log_dir);

  holder->Kill();
  // Its kubelet, containerd, etcd and kube-apiserver die with it (PR_SET_PDEATHSIG); the shims
  // live on. The kernel delivers those deaths one by one, so wait until only shims are left (a
  // count would also be met by one shim beside an API server still dying).
  auto only_shims_left = [&] {
    for (const std::string& p : ProcessesNaming(cp_dir))
      if (p.find("containerd-shim") == std::string::npos) return false;
    return true;
  };
  EXPECT_TRUE(WaitFor(only_shims_left, seconds(30))) << Listed(ProcessesNaming(cp_dir));
  const std::vector<std::string> left = ProcessesNaming(cp_dir);
  EXPECT_FALSE(left.empty()) << "expected containerd shims to outlive a killed run";
  for (const std::string& p : left) EXPECT_NE(p.find("containerd-shim"), std::string::npos) << p;
  size_t mounts = 0;
  for (const std::string& m : CaptureHostFootprint().mounts) mounts += m.rfind(cp_dir, 0) == 0;
  EXPECT_GT(mounts, 0u) << "expected the pod's rootfs and network namespace still mounted";

  Result<std::unique_ptr<ControlPlane>> next = ControlPlane::Start(*env);
  ASSERT_TRUE(next.ok()) << next.error();
  next->reset();
  const std::vector<std::string> differences = HostDifferences(before, CaptureHostFootprint());
  EXPECT_TRUE(differences.empty()) << "the host differs after the sweep:\n"
                                   << Listed(differences);
  EXPECT_FALSE(fs::exists(cp_dir)) << cp_dir;
  EXPECT_EQ(Listed(ProcessesNaming(cp_dir)), "");
}

}  // namespace
}  // namespace graintune::testing
