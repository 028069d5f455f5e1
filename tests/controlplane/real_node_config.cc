// The real node's configuration files: certificates and kubeconfig of the kubelet, the kubelet's
// KubeletConfiguration, containerd's config.toml and a CNI bridge network. Every path in
// them points into the node's folder, so that nothing is written to the host's defaults.
#include <filesystem>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/real_node.h"

namespace graintune::testing {

namespace fs = std::filesystem;

namespace {

// This VM (and CI's) has no CAP_SYS_RESOURCE: a container's oom_score_adj below containerd's own
// makes runc fail every sandbox ("can't get final child's PID from pipe: EOF") unless containerd
// restricts it. Netns mounts go under the state folder instead of /var/run/netns, runc's state
// under the node's folder instead of /run/containerd/runc. (containerd 1.6 still puts its shims'
// sockets in /run/containerd/s, whatever its state folder.)
std::string ContainerdConfig(const std::string& dir, const std::string& socket,
                             const RealNodeOptions& o) {
  return "version = 2\n"
         "root = \"" + dir + "/containerd/root\"\n"
         "state = \"" + dir + "/containerd/state\"\n"
         "disabled_plugins = [\"io.containerd.snapshotter.v1.aufs\", "
         "\"io.containerd.snapshotter.v1.btrfs\", \"io.containerd.snapshotter.v1.zfs\", "
         "\"io.containerd.snapshotter.v1.devmapper\", "
         "\"io.containerd.tracing.processor.v1.otlp\"]\n"
         "[grpc]\n  address = \"" + socket + "\"\n"
         "[plugins]\n"
         "  [plugins.\"io.containerd.internal.v1.opt\"]\n"
         "    path = \"" + dir + "/containerd/opt\"\n"
         "  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
         "    sandbox_image = \"" + o.sandbox_image + "\"\n"
         "    restrict_oom_score_adj = true\n"
         "    netns_mounts_under_state_dir = true\n"
         "    disable_apparmor = true\n"
         "    stream_server_address = \"127.0.0.1\"\n"
         "    stream_server_port = \"0\"\n"
         "    [plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
         "      bin_dir = \"" + o.cni_bin_dir + "\"\n"
         "      conf_dir = \"" + dir + "/cni\"\n"
         "    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
         "      snapshotter = \"overlayfs\"\n"
         "      default_runtime_name = \"runc\"\n"
         "      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
         "        runtime_type = \"io.containerd.runc.v2\"\n"
         "        [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
         "          SystemdCgroup = false\n"
         "          Root = \"" + dir + "/containerd/runc\"\n";
}

// cgroup v1 needs failCgroupV1: false since kubelet 1.35. makeIPTablesUtilChains and
// protectKernelDefaults off keep it from the host's firewall and from refusing to start; the
// sysctls it still writes are restored at stop. Eviction and image garbage collection are off in
// effect (a busy CI disk must not evict test pods). A full status report every 10 s lets tests
// see the kubelet's own update keep the patched google.com/tpu.
std::string KubeletConfig(const std::string& dir, const std::string& socket,
                          const std::string& cgroup_root, int port, int healthz_port) {
  return "apiVersion: kubelet.config.k8s.io/v1beta1\n"
         "kind: KubeletConfiguration\n"
         "failCgroupV1: false\n"
         "cgroupDriver: cgroupfs\n"
         "cgroupRoot: /" + cgroup_root + "\n"
         "cgroupsPerQOS: true\n"
         "oomScoreAdj: 0\n"
         "makeIPTablesUtilChains: false\n"
         "protectKernelDefaults: false\n"
         "failSwapOn: false\n"
         "address: 127.0.0.1\n"
         "port: " + std::to_string(port) + "\n"
         "readOnlyPort: 0\n"
         "healthzBindAddress: 127.0.0.1\n"
         "healthzPort: " + std::to_string(healthz_port) + "\n"
         "tlsCertFile: " + dir + "/kubelet-serving.crt\n"
         "tlsPrivateKeyFile: " + dir + "/kubelet-serving.key\n"
         "authentication:\n"
         "  anonymous: {enabled: false}\n"
         "  webhook: {enabled: false}\n"
         "  x509: {clientCAFile: " + dir + "/ca.crt}\n"
         "authorization: {mode: AlwaysAllow}\n"
         "containerRuntimeEndpoint: unix://" + socket + "\n"
         "podLogsDir: " + dir + "/pod-logs\n"
         "volumePluginDir: " + dir + "/volume-plugins\n"
         "clusterDomain: cluster.local\n"
         "resolvConf: /etc/resolv.conf\n"
         "evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, "
         "nodefs.inodesFree: 1%}\n"
         "imageGCHighThresholdPercent: 100\n"
         "imageGCLowThresholdPercent: 99\n"
         "nodeStatusUpdateFrequency: 10s\n"
         "nodeStatusReportFrequency: 10s\n"
         "rotateCertificates: false\n"
         "serverTLSBootstrap: false\n";
}

}  // namespace

// The host is the bridge's gateway (net.ipv4.ip_forward=1, restored at stop); no masquerading,
// so no iptables rules. containerd adds the loopback interface itself.
std::string RealNode::BridgeNetwork() const {
  return R"({"cniVersion": "0.4.0", "name": ")" + network_ +
         R"(", "plugins": [{"type": "bridge", "bridge": ")" + bridge_ +
         R"(", "isGateway": true, "ipMasq": false, "hairpinMode": true, )"
         R"("ipam": {"type": "host-local", "ranges": [[{"subnet": ")" + options_.pod_cidr +
         R"("}]], "dataDir": ")" + dir_ + R"(/cni-ipam"}}]})";
}

Status RealNode::WriteConfiguration(ControlPlane& cp) {
  std::error_code ec;
  for (const char* sub : {"containerd", "cni", "kubelet", "pod-logs", "volume-plugins"})
    fs::create_directories(dir_ + "/" + sub, ec);
  Result<server::SignedCertificate> client = server::IssueCertificate(
      cp.ca(), {.common_name = std::string("system:node:") + kName,
                .organizations = {"system:nodes"}, .valid_days = 2});
  if (!client.ok()) return client.status();
  Result<server::SignedCertificate> serving = server::IssueCertificate(
      cp.ca(), {.common_name = kName, .dns_names = {kName}, .ip_addresses = {"127.0.0.1"},
                .server = true, .valid_days = 2});
  if (!serving.ok()) return serving.status();
  kube::ClientConfig kubelet = cp.admin_config();
  kubelet.client_cert_pem = client->cert_pem;
  kubelet.client_key_pem = client->key_pem;
  kubelet.token.clear();
  Result<int> port = FreeLoopbackPort(), healthz = FreeLoopbackPort();
  if (!port.ok() || !healthz.ok()) return Status::Error("no free loopback ports for the kubelet");
  for (Status s :
       {WriteFile(dir_ + "/ca.crt", cp.ca().cert_pem),
        WriteFile(dir_ + "/kubelet-serving.crt", serving->cert_pem),
        WriteFile(dir_ + "/kubelet-serving.key", serving->key_pem),
        WriteKubeconfig(kubelet, dir_ + "/kubelet.kubeconfig"),
        WriteFile(dir_ + "/containerd.toml", ContainerdConfig(dir_, socket_, options_)),
        WriteFile(dir_ + "/kubelet.yaml",
                  KubeletConfig(dir_, socket_, cgroup_name_, *port, *healthz)),
        WriteFile(dir_ + "/cni/10-graintune.conflist", BridgeNetwork())})
    if (!s.ok()) return s;
  return Status::Ok();
}

}  // namespace graintune::testing
