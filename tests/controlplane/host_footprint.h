// What a real node (kubelet + containerd + runc) can change on this machine outside its own
// folder, captured before it starts so that its stop (or the sweep after a killed run) puts the
// machine back, and so that tests can show nothing differs afterwards:
//   - the sysctls the kubelet sets at start (vm.overcommit_memory, kernel.panic, ...), and
//     net.ipv4.ip_forward;
//   - iptables and ip6tables chains, per table;
//   - well-known host paths the kubelet and containerd create by default (/var/lib/kubelet,
//     /var/log/containers, /run/containerd, ...): which of them exist;
//   - the top-level cgroups of every cgroup v1 hierarchy (the kubelet's pods live under one);
//   - mount points under the paths above and under the harness's temporary folders;
//   - network links (a CNI bridge).
//
// Restoring writes the sysctls back, deletes KUBE-* and CNI-* chains that were not there before
// (and the rules that jump to them), deletes the symbolic links the kubelet made in
// /var/log/containers (its one hard-coded folder) into the node's folder, and removes watched
// paths that were absent before when they hold nothing but empty folders, sockets and dangling
// symbolic links (never recursively otherwise).
// It does not stop processes, unmount or remove cgroups: RealNode and its sweep do that first.
//
// Not thread-safe against a second real node on the same machine: two nodes at once would
// restore each other's settings. Errors while restoring are collected, not fatal.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::testing {

struct HostFootprint {
  std::map<std::string, std::string> sysctls;  // "kernel.panic" -> "1"
  std::set<std::string> chains;                // "iptables filter KUBE-FIREWALL"
  std::set<std::string> paths;                 // watched paths that exist
  std::set<std::string> cgroups;               // "/sys/fs/cgroup/memory/kubepods"
  std::set<std::string> mounts;                // mount points under watched places
  std::set<std::string> links;                 // network interfaces: "eth0"

  std::string ToJson() const;
  static Result<HostFootprint> FromJson(const std::string& text);
};

HostFootprint CaptureHostFootprint();

// Every mount point in this process's mount namespace (/proc/self/mountinfo), with its octal
// escapes (\040 for a space) decoded.
std::vector<std::string> MountPoints();

// One line per difference ("sysctl kernel.panic: 1 -> 10", "new cgroup /sys/fs/cgroup/..."),
// empty when `after` matches `before`.
std::vector<std::string> HostDifferences(const HostFootprint& before, const HostFootprint& after);

// Puts back what `before` recorded, as described above; `node_dir` is the folder whose files the
// kubelet linked to. Ok, or an error listing every step that failed.
Status RestoreHostFootprint(const HostFootprint& before, const std::string& node_dir);

}  // namespace graintune::testing
