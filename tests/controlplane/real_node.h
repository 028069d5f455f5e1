// One real Kubernetes node beside the KWOK TPU nodes: the cached kubelet (scripts/controlplane/
// build.sh) with Debian's containerd and runc, so pods really run (native sidecars, memory
// limits and OOM kills, restarts). It is named `localhost` (so `kubectl logs/exec` reach it with
// a serving certificate for localhost and 127.0.0.1) and made to look like a single-host TPU VM:
// the labels GKE puts on a ct6e-standard-4t node (as tpu_nodes.h), and `google.com/tpu: 4` in
// its status capacity and allocatable (an extended resource patched in, which the kubelet's own
// status updates keep). Its CPU and memory are this machine's.
//
// Everything lives in `<control plane folder>/node`: containerd's root, state, socket and config,
// the kubelet's root, certificates, config and pod logs; its cgroups under one cgroup root named
// after that folder (/sys/fs/cgroup/*/graintune-cp-PID-XXXXXX). Pods get IPs from `pod_cidr` on
// a CNI bridge named after the folder (gtXXXXXX; host-local IPAM), reachable from this machine;
// hostNetwork pods have the node's address. There is no kube-proxy: Service ClusterIPs do not
// route. Images come from OCI archives imported into containerd (no registry); pods use
// `imagePullPolicy: Never`.
//
// Host settings: the kubelet writes sysctls at start, and the defaults of the kubelet and
// containerd create host folders; the footprint captured before the start (host_footprint.h,
// also saved as node/host-before.json) is restored at stop. Stop order: kubelet, then every
// container (killed through the node's cgroups) and containerd shim, containerd, the mounts
// under the folder, the cgroups, the bridge and libcni's cached results (libcni keeps them in
// /var/lib/cni whatever the configuration), then the host settings. A run killed before its stop (kubelet
// and containerd die with it; shims and containers do not) is cleaned the same way by
// SweepDeadRealNode at the next control plane start, from its saved footprint.
//
// Only one real node per machine at a time (they would share sysctls and /var/log/containers).
// Not thread-safe; owned by the ControlPlane, which stops it before the API server.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/host_footprint.h"

namespace graintune::testing {

class ControlPlane;

struct RealNodeOptions {
  std::vector<std::string> images;  // OCI archives imported into containerd before the start
  std::string sandbox_image;        // the pod sandbox (pause) image; one of `images`
  std::string machine_type = "ct6e-standard-4t";
  std::string accelerator = "tpu-v6e-slice";
  std::string topology = "2x2";
  bool tpu_taint = false;  // GKE's google.com/tpu=present:NoSchedule (off: the chart runs here)
  std::string containerd_bin = "/usr/bin/containerd";
  std::string ctr_bin = "/usr/bin/ctr";
  std::string cni_bin_dir = "/usr/lib/cni";
  std::string pod_cidr = "10.213.0.0/24";  // the bridge takes .1
};

class RealNode {
 public:
  static constexpr char kName[] = "localhost";

  // Starts containerd and the kubelet, imports the images, waits until the Node is Ready, then
  // labels and patches it. An error quotes the failing part's log; what was started is stopped.
  static Result<std::unique_ptr<RealNode>> Start(const RealNodeOptions& options,
                                                 ControlPlane& control_plane);
  ~RealNode() { Stop(); }

  // Idempotent; see the stop order above. Errors are logged to stderr: a stop cannot fail.
  void Stop();

  // Imports one more OCI archive into the node's containerd (namespace k8s.io).
  Status ImportImage(const std::string& archive);

  // SIGKILLs every process of one container (its ID without "containerd://") through its cgroup,
  // as cgroup v2's group OOM kill (memory.oom.group) ends a container: its first process and
  // every child at once. The kubelet then sees the container exit 137 and restarts it as its
  // pod's restartPolicy says. This machine's cgroup v1 kills only the largest process on an OOM.
  Status KillContainer(const std::string& container_id);

  // Where the kubelet keeps a pod's emptyDir `volume` on this machine.
  std::string PodVolumeDir(const std::string& pod_uid, const std::string& volume) const;
  // The /etc/hosts the kubelet writes for a pod (not on the host network) and bind-mounts into
  // each of its containers, anew at each container's start.
  std::string PodHostsFile(const std::string& pod_uid) const;

  const std::string& dir() const { return dir_; }
  const std::string& containerd_socket() const { return socket_; }
  const std::string& kubelet_log() const { return kubelet_log_; }
  const std::string& containerd_log() const { return containerd_log_; }
  // How long the start took until the Node was Ready, in seconds (for reports).
  double seconds_to_ready() const { return seconds_to_ready_; }

 private:
  RealNode() = default;
  Status WriteConfiguration(ControlPlane& control_plane);
  std::string BridgeNetwork() const;
  Status StartContainerd();
  Status StartKubelet();
  Status WaitNodeReady(ControlPlane& control_plane);
  Status MakeTpuHost(ControlPlane& control_plane);

  RealNodeOptions options_;
  std::string dir_, socket_, cgroup_name_, bridge_, network_, kubelet_bin_;
  std::string kubelet_log_, containerd_log_;
  HostFootprint before_;
  bool before_captured_ = false;
  double seconds_to_ready_ = 0;
  bool stopped_ = false;
  ChildProcess containerd_, kubelet_;
};

// Cleans up after a real node whose control plane folder `cp_dir` belongs to a dead process:
// kills its containers and shims, unmounts everything under the folder, removes its cgroups and
// restores the host footprint it saved. Leaves the folder itself to the caller. Returns false
// when a mount under the folder could not be removed (the caller must not delete the folder
// then: a bind mount could lead outside it).
bool SweepDeadRealNode(const std::string& cp_dir);

}  // namespace graintune::testing
