#include "tests/controlplane/real_node.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kube/config.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tuner/machine_types.h"

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";
constexpr char kFootprintFile[] = "host-before.json";
// libcni's cache of ADD results, which containerd 1.6 does not let us move.
constexpr char kCniResults[] = "/var/lib/cni/results";

// The host-wide names of the node in a control plane folder graintune-cp-PID-XXXXXX.
struct NodeNames {
  std::string cgroup;   // graintune-cp-PID-XXXXXX
  std::string bridge;   // gtXXXXXX (a link name has at most 15 characters)
  std::string network;  // graintune-XXXXXX, the CNI network
};

NodeNames NamesFor(const std::string& cp_dir) {
  const std::string base = fs::path(cp_dir).filename().string();
  const std::string suffix = base.substr(base.rfind('-') + 1);
  return {base, "gt" + suffix, "graintune-" + suffix};
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Every cgroup v1 hierarchy (and the cgroup2 one of a hybrid setup) mounted under
// /sys/fs/cgroup.
std::vector<fs::path> CgroupHierarchies() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(kCgroupRoot, ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) out.push_back(e.path());
  return out;
}

// The folders below `top`, as far as they can be listed: cgroups vanish while they are walked
// (the kubelet and containerd remove a pod's as it ends), so an error ends the walk instead of
// throwing (the range-for form's increment throws).
std::vector<fs::path> SubdirectoriesOf(const fs::path& top) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(top, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec)) out.push_back(it->path());
  }
  return out;
}

std::vector<pid_t> CgroupProcesses(const fs::path& top) {
  std::vector<pid_t> pids;
  std::error_code ec;
  if (!fs::is_directory(top, ec)) return pids;
  std::vector<fs::path> dirs = SubdirectoriesOf(top);
  dirs.insert(dirs.begin(), top);
  for (const fs::path& d : dirs) {
    std::ifstream procs(d / "cgroup.procs");
    pid_t pid;
    while (procs >> pid) pids.push_back(pid);
  }
  return pids;
}

// SIGKILLs every process in the cgroup `name` of any hierarchy until none is left (containers
// whose shim is gone keep running otherwise; a cgroup v1 has no cgroup.kill).
void KillCgroup(const std::string& name) {
  for (int round = 0; round < 100; ++round) {
    bool any = false;
    for (const fs::path& h : CgroupHierarchies())
      for (pid_t pid : CgroupProcesses(h / name)) {
        any = true;
        ::kill(pid, SIGKILL);
      }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr, "real node: processes remain in cgroup %s\n", name.c_str());
}

void RemoveCgroup(const std::string& name) {
  for (const fs::path& h : CgroupHierarchies()) {
    const fs::path top = h / name;
    std::error_code ec;
    if (!fs::is_directory(top, ec)) continue;
    std::vector<fs::path> dirs = SubdirectoriesOf(top);
    std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
      return a.string().size() > b.string().size();
    });
    dirs.push_back(top);
    for (const fs::path& d : dirs)
      for (int i = 0; i < 20 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(top, ec)) std::fprintf(stderr, "real node: cannot remove %s\n", top.c_str());
  }
}

// Creates the cgroup `name` in every hierarchy; the kubelet requires its cgroup root to exist.
// A new cpuset is empty, and nothing can join it until it has the parent's CPUs and memory nodes.
Status CreateCgroup(const std::string& name) {
  for (const fs::path& h : CgroupHierarchies()) {
    std::error_code ec;
    fs::create_directory(h / name, ec);
    if (ec)
      return Status::Error("cannot create cgroup " + (h / name).string() + ": " + ec.message());
    for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
      if (!fs::exists(h / file, ec)) continue;
      std::ifstream parent(h / file);
      std::string value;
      std::getline(parent, value);
      std::ofstream child(h / name / file);
      child << value << "\n";
    }
  }
  return Status::Ok();
}

// Processes whose command line names `dir`: the containerd shims of a node in that folder (and
// its kubelet and containerd if they still run).
std::vector<pid_t> ProcessesNaming(const std::string& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::stringstream cmdline;
    cmdline << in.rdbuf();
    if (cmdline.str().find(dir + "/") != std::string::npos) out.push_back(pid);
  }
  return out;
}

void KillProcessesNaming(const std::string& dir) {
  for (int round = 0; round < 100; ++round) {
    const std::vector<pid_t> pids = ProcessesNaming(dir);
    if (pids.empty()) return;
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& point : MountPoints())
    if (point == dir || point.rfind(dir + "/", 0) == 0) out.push_back(point);
  return out;
}

// Detaches every mount under `dir`, deepest first; true when none is left.
bool UnmountUnder(const std::string& dir) {
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> points = MountsUnder(dir);
    if (points.empty()) return true;
    std::sort(points.begin(), points.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const std::string& p : points) ::umount2(p.c_str(), MNT_DETACH);
  }
  return MountsUnder(dir).empty();
}

// The whole cleanup of a node in `cp_dir`, whether it stopped cleanly or its process died.
bool CleanUp(const std::string& cp_dir, const HostFootprint* before) {
  const std::string node_dir = cp_dir + "/node";
  const NodeNames names = NamesFor(cp_dir);
  KillCgroup(names.cgroup);
  KillProcessesNaming(node_dir);
  const bool unmounted = UnmountUnder(cp_dir);
  if (!unmounted) std::fprintf(stderr, "real node: mounts remain under %s\n", cp_dir.c_str());
  RemoveCgroup(names.cgroup);
  std::error_code ec;
  // The pods' veth pairs went with their network namespaces; the bridge stays until deleted.
  if (fs::exists("/sys/class/net/" + names.bridge, ec))
    if (Result<std::string> r = RunShell("ip link delete " + names.bridge + " 2>&1", "ip link");
        !r.ok())
      std::fprintf(stderr, "real node: %s\n", r.error().c_str());
  // A result names the sandbox's network namespace, which lies in the node's folder.
  for (const fs::directory_entry& e : fs::directory_iterator(kCniResults, ec)) {
    std::ifstream in(e.path());
    std::stringstream result;
    result << in.rdbuf();
    if (result.str().find(node_dir + "/") != std::string::npos) fs::remove(e.path(), ec);
  }
  HostFootprint saved;
  if (!before) {
    std::ifstream in(node_dir + "/" + kFootprintFile);
    std::stringstream text;
    text << in.rdbuf();
    Result<HostFootprint> parsed = HostFootprint::FromJson(text.str());
    if (parsed.ok()) {
      saved = *parsed;
      before = &saved;
    }
  }
  if (before)
    if (Status s = RestoreHostFootprint(*before, node_dir); !s.ok())
      std::fprintf(stderr, "real node: %s\n", s.message().c_str());
  return unmounted;
}

}  // namespace

bool SweepDeadRealNode(const std::string& cp_dir) {
  std::error_code ec;
  if (!fs::exists(cp_dir + "/node", ec)) return UnmountUnder(cp_dir);
  return CleanUp(cp_dir, nullptr);
}

Result<std::unique_ptr<RealNode>> RealNode::Start(const RealNodeOptions& options,
                                                  ControlPlane& cp) {
  const Clock::time_point start = Clock::now();
  std::unique_ptr<RealNode> node(new RealNode());
  node->options_ = options;
  node->dir_ = cp.dir() + "/node";
  const NodeNames names = NamesFor(cp.dir());
  node->cgroup_name_ = names.cgroup;
  node->bridge_ = names.bridge;
  node->network_ = names.network;
  node->kubelet_bin_ = cp.bin_dir() + "/kubelet";
  node->socket_ = node->dir_ + "/containerd.sock";
  node->containerd_log_ = node->dir_ + "/containerd.log";
  node->kubelet_log_ = node->dir_ + "/kubelet.log";
  for (const std::string& bin : {node->kubelet_bin_, options.containerd_bin, options.ctr_bin})
    if (::access(bin.c_str(), X_OK) != 0)
      return Status::Error("'" + bin + "' is missing: build the kubelet with scripts/controlplane/"
                           "build.sh, install containerd with scripts/setup.sh");
  if (options.sandbox_image.empty())
    return Status::Error("a real node needs a sandbox (pause) image among its images");
  std::error_code ec;
  fs::create_directories(node->dir_, ec);
  if (ec) return Status::Error("cannot create " + node->dir_ + ": " + ec.message());
  // Saved before anything changes, so that a sweep after a killed run can put it back.
  node->before_ = CaptureHostFootprint();
  node->before_captured_ = true;
  if (Status s = WriteFile(node->dir_ + "/" + kFootprintFile, node->before_.ToJson()); !s.ok())
    return s;
  for (Status s : {CreateCgroup(node->cgroup_name_), node->WriteConfiguration(cp),
                   node->StartContainerd()})
    if (!s.ok()) return s;
  for (const std::string& archive : options.images)
    if (Status s = node->ImportImage(archive); !s.ok()) return s;
  for (Status s : {node->StartKubelet(), node->WaitNodeReady(cp), node->MakeTpuHost(cp)})
    if (!s.ok()) return s;
  node->seconds_to_ready_ = std::chrono::duration<double>(Clock::now() - start).count();
  return node;
}

void RealNode::Stop() {
  if (stopped_ || dir_.empty()) return;
  stopped_ = true;
  kubelet_.Stop(std::chrono::seconds(10));
  // Containers first (through the cgroups, which shims do not leave), then the shims, then
  // containerd: a shim killed before its container would orphan it.
  const std::string cp_dir = fs::path(dir_).parent_path().string();
  KillCgroup(cgroup_name_);
  containerd_.Stop(std::chrono::seconds(5));
  CleanUp(cp_dir, before_captured_ ? &before_ : nullptr);
}

Status RealNode::KillContainer(const std::string& container_id) {
  if (container_id.empty()) return Status::Error("no container ID");
  for (const fs::path& h : CgroupHierarchies())
    for (const fs::path& d : SubdirectoriesOf(h / cgroup_name_))
      if (d.filename() == container_id) {
        KillCgroup(d.lexically_relative(h).string());
        return Status::Ok();
      }
  return Status::Error("no cgroup of container " + container_id + " under " + cgroup_name_);
}

std::string RealNode::PodVolumeDir(const std::string& pod_uid, const std::string& volume) const {
  return dir_ + "/kubelet/pods/" + pod_uid + "/volumes/kubernetes.io~empty-dir/" + volume;
}

std::string RealNode::PodHostsFile(const std::string& pod_uid) const {
  return dir_ + "/kubelet/pods/" + pod_uid + "/etc-hosts";
}

Status RealNode::ImportImage(const std::string& archive) {
  Result<std::string> out =
      RunShell(Quote(options_.ctr_bin) + " --address " + Quote(socket_) +
                   " -n k8s.io images import --snapshotter overlayfs " + Quote(archive) + " 2>&1",
               "ctr images import " + archive);
  return out.ok() ? Status::Ok() : out.status();
}

Status RealNode::StartContainerd() {
  Result<ChildProcess> p = ChildProcess::Spawn(
      {options_.containerd_bin, "--config", dir_ + "/containerd.toml"}, containerd_log_);
  if (!p.ok()) return p.status();
  containerd_ = std::move(p).value();
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    if (!containerd_.Running())
      return Status::Error("containerd exited:\n" + TailOfFile(containerd_log_));
    if (RunShell(Quote(options_.ctr_bin) + " --address " + Quote(socket_) +
                     " version >/dev/null 2>&1",
                 "ctr version")
            .ok())
      return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Error("containerd did not answer within 30 s:\n" + TailOfFile(containerd_log_));
}

Status RealNode::StartKubelet() {
  Result<ChildProcess> p = ChildProcess::Spawn(
      {kubelet_bin_, "--config", dir_ + "/kubelet.yaml",
       "--kubeconfig", dir_ + "/kubelet.kubeconfig", "--hostname-override", kName,
       "--root-dir", dir_ + "/kubelet",
       "--cert-dir", dir_ + "/kubelet/pki", "--v=1"},
      kubelet_log_);
  if (!p.ok()) return p.status();
  kubelet_ = std::move(p).value();
  return Status::Ok();
}

Status RealNode::WaitNodeReady(ControlPlane& cp) {
  std::shared_ptr<kube::Client> client = cp.AdminClient();
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(120);
  std::string last = "not registered";
  while (Clock::now() < deadline) {
    if (!kubelet_.Running())
      return Status::Error("kubelet exited:\n" + TailOfFile(kubelet_log_));
    if (!containerd_.Running())
      return Status::Error("containerd exited:\n" + TailOfFile(containerd_log_));
    kube::ApiResult<kube::Json> node = client->Get(kube::resources::kNodes, "", kName);
    if (node.ok()) {
      for (const kube::Json& c :
           node->value("status", kube::Json::object()).value("conditions", kube::Json::array()))
        if (c.value("type", "") == "Ready") {
          if (c.value("status", "") == "True") return Status::Ok();
          last = c.value("reason", "") + ": " + c.value("message", "");
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return Status::Error("node " + std::string(kName) + " not Ready after 120 s (" + last +
                       "); kubelet log:\n" + TailOfFile(kubelet_log_) + "\ncontainerd log:\n" +
                       TailOfFile(containerd_log_));
}

Status RealNode::MakeTpuHost(ControlPlane& cp) {
  std::optional<MachineType> type = FindMachineType(options_.machine_type);
  if (!type) return Status::Error("unknown machine type '" + options_.machine_type + "'");
  std::shared_ptr<kube::Client> client = cp.AdminClient();
  kube::Json labels = {{"node.kubernetes.io/instance-type", options_.machine_type},
                       {"cloud.google.com/gke-tpu-accelerator", options_.accelerator},
                       {"cloud.google.com/gke-tpu-topology", options_.topology}};
  kube::Json patch = {{"metadata", {{"labels", labels}}}};
  if (options_.tpu_taint)
    patch["spec"] = {{"taints", {{{"key", "google.com/tpu"}, {"value", "present"},
                                  {"effect", "NoSchedule"}}}}};
  kube::ApiResult<kube::Json> labelled =
      client->Patch(kube::resources::kNodes, "", kName, kube::PatchType::kMerge, patch);
  if (!labelled.ok()) return labelled.error().ToStatus();
  // An extended resource is advertised through the status; the kubelet's own status updates
  // merge into it and keep it.
  const std::string chips = std::to_string(type->tpu_chips);
  kube::ApiResult<kube::Json> advertised = client->Patch(
      kube::resources::kNodes, "", kName, kube::PatchType::kMerge,
      {{"status", {{"capacity", {{"google.com/tpu", chips}}},
                   {"allocatable", {{"google.com/tpu", chips}}}}}},
      "status");
  return advertised.ok() ? Status::Ok() : advertised.error().ToStatus();
}

}  // namespace graintune::testing
