#include "tests/controlplane/host_footprint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/controlplane/child_process.h"

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;

// What the kubelet's container manager sets at start (setupKernelTunables), and what a CNI
// bridge sets.
constexpr const char* kSysctls[] = {"vm.overcommit_memory",     "vm.panic_on_oom",
                                    "kernel.panic",             "kernel.panic_on_oops",
                                    "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes",
                                    "net.ipv4.ip_forward"};

// Defaults of the kubelet, containerd and CNI that a node started elsewhere would create.
constexpr const char* kWatchedPaths[] = {
    "/var/lib/kubelet", "/var/log/containers", "/var/log/pods",  "/run/containerd",
    "/var/lib/containerd", "/opt/containerd",  "/var/lib/cni",   "/run/netns",
    "/etc/cni",         "/opt/cni",            "/etc/kubernetes", "/usr/libexec/kubernetes"};

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";
// Where the kubelet links every container's log, whatever its podLogsDir.
constexpr char kContainerLogLinks[] = "/var/log/containers";

std::string SysctlPath(std::string name) {
  for (char& c : name)
    if (c == '.') c = '/';
  return "/proc/sys/" + name;
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::string value;
  std::getline(in, value);
  return value;
}

// Mount points decode octal escapes (\040 for a space) of /proc/self/mountinfo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool WatchedMount(const std::string& point) {
  const std::string harness = (fs::temp_directory_path() / "graintune-cp-").string();
  if (point.rfind(harness, 0) == 0) return true;
  for (const char* p : kWatchedPaths) {
    const std::string prefix = p;
    if (point == prefix || point.rfind(prefix + "/", 0) == 0) return true;
  }
  return false;
}

// "iptables" / "ip6tables" -> table -> chains, from *-save output.
void CaptureChains(const std::string& family, std::set<std::string>& chains) {
  Result<std::string> saved = RunShell(family + "-save 2>/dev/null", family + "-save");
  if (!saved.ok()) return;
  std::istringstream lines(*saved);
  std::string line, table;
  while (std::getline(lines, line)) {
    if (line.rfind('*', 0) == 0) table = line.substr(1);
    if (line.rfind(':', 0) == 0)
      chains.insert(family + " " + table + " " + line.substr(1, line.find(' ') - 1));
  }
}

bool OursToDelete(const std::string& chain) {
  return chain.rfind("KUBE-", 0) == 0 || chain.rfind("CNI-", 0) == 0;
}

// Deletes the new chains of one family with one iptables-restore --noflush script: the rules
// that jump to them first, then the chains.
Status DeleteNewChains(const std::string& family, const std::set<std::string>& before) {
  Result<std::string> saved = RunShell(family + "-save 2>/dev/null", family + "-save");
  if (!saved.ok()) return Status::Ok();
  std::map<std::string, std::vector<std::string>> script;  // table -> lines
  std::map<std::string, std::set<std::string>> doomed;     // table -> chains
  std::istringstream lines(*saved);
  std::string line, table;
  std::vector<std::pair<std::string, std::string>> rules;  // (table, rule)
  while (std::getline(lines, line)) {
    if (line.rfind('*', 0) == 0) table = line.substr(1);
    if (line.rfind(':', 0) == 0) {
      const std::string chain = line.substr(1, line.find(' ') - 1);
      if (OursToDelete(chain) && !before.count(family + " " + table + " " + chain))
        doomed[table].insert(chain);
    }
    if (line.rfind("-A ", 0) == 0) rules.emplace_back(table, line);
  }
  if (doomed.empty()) return Status::Ok();
  for (const auto& [t, rule] : rules) {
    std::istringstream words(rule);
    std::string word, chain, previous;
    words >> word >> chain;
    if (doomed[t].count(chain)) continue;  // flushed below
    bool jumps = false;
    while (words >> word) {
      if ((previous == "-j" || previous == "-g") && doomed[t].count(word)) jumps = true;
      previous = word;
    }
    if (jumps) script[t].push_back("-D" + rule.substr(2));
  }
  for (const auto& [t, chains] : doomed) {
    for (const std::string& c : chains) script[t].push_back("-F " + c);
    for (const std::string& c : chains) script[t].push_back("-X " + c);
  }
  std::string text;
  for (const auto& [t, commands] : script) {
    if (commands.empty()) continue;
    text += "*" + t + "\n";
    for (const std::string& c : commands) text += c + "\n";
    text += "COMMIT\n";
  }
  char tmpl[] = "/tmp/graintune-iptables-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return Status::Error("cannot write an iptables-restore script");
  ::close(fd);
  Status written = WriteFile(tmpl, text);
  Result<std::string> restored =
      written.ok()
          ? RunShell(family + "-restore --noflush < " + tmpl + " 2>&1", family + "-restore")
          : Result<std::string>(written);
  ::unlink(tmpl);
  if (!restored.ok()) return restored.status();
  for (const auto& [t, chains] : doomed)
    for (const std::string& c : chains)
      std::fprintf(stderr, "real node: deleted %s chain %s %s\n", family.c_str(), t.c_str(),
                   c.c_str());
  return Status::Ok();
}

// True when `path` holds only folders, sockets and symbolic links that lead nowhere: what the
// kubelet and containerd leave in a default folder once their files are gone.
bool OnlyLeftovers(const fs::path& path) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const fs::file_status s = e.symlink_status(ec);
    if (fs::is_symlink(s)) {
      if (fs::exists(e.path(), ec)) return false;
    } else if (fs::is_directory(s)) {
      if (!OnlyLeftovers(e.path())) return false;
    } else if (!fs::is_socket(s)) {
      return false;
    }
  }
  return !ec;
}

}  // namespace

HostFootprint CaptureHostFootprint() {
  HostFootprint f;
  for (const char* name : kSysctls) {
    if (::access(SysctlPath(name).c_str(), R_OK) == 0)
      f.sysctls[name] = ReadTrimmed(SysctlPath(name));
  }
  CaptureChains("iptables", f.chains);
  CaptureChains("ip6tables", f.chains);
  std::error_code ec;
  for (const char* p : kWatchedPaths)
    if (fs::exists(fs::symlink_status(p, ec))) f.paths.insert(p);
  for (const fs::directory_entry& h : fs::directory_iterator(kCgroupRoot, ec))
    for (const fs::directory_entry& g : fs::directory_iterator(h.path(), ec))
      if (g.is_directory(ec)) f.cgroups.insert(g.path().string());
  for (const fs::directory_entry& l : fs::directory_iterator("/sys/class/net", ec))
    f.links.insert(l.path().filename().string());
  for (const std::string& point : MountPoints())
    if (WatchedMount(point)) f.mounts.insert(point);
  return f;
}

std::vector<std::string> MountPoints() {
  std::vector<std::string> points;
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, point;
    fields >> id >> parent >> devices >> root >> point;
    points.push_back(Unescape(point));
  }
  return points;
}

std::vector<std::string> HostDifferences(const HostFootprint& before, const HostFootprint& after) {
  std::vector<std::string> out;
  for (const auto& [name, value] : after.sysctls) {
    auto it = before.sysctls.find(name);
    if (it != before.sysctls.end() && it->second != value)
      out.push_back("sysctl " + name + ": " + it->second + " -> " + value);
  }
  const auto compare = [&out](const std::set<std::string>& b, const std::set<std::string>& a,
                              const std::string& what) {
    for (const std::string& x : a)
      if (!b.count(x)) out.push_back("new " + what + " " + x);
    for (const std::string& x : b)
      if (!a.count(x)) out.push_back("gone " + what + " " + x);
  };
  compare(before.chains, after.chains, "chain");
  compare(before.paths, after.paths, "path");
  compare(before.cgroups, after.cgroups, "cgroup");
  compare(before.mounts, after.mounts, "mount");
  compare(before.links, after.links, "network link");
  return out;
}

Status RestoreHostFootprint(const HostFootprint& before, const std::string& node_dir) {
  std::string failures;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(kContainerLogLinks, ec)) {
    if (!e.is_symlink(ec)) continue;
    if (fs::read_symlink(e.path(), ec).string().rfind(node_dir + "/", 0) == 0)
      fs::remove(e.path(), ec);
  }
  for (const auto& [name, value] : before.sysctls) {
    const std::string now = ReadTrimmed(SysctlPath(name));
    if (now == value) continue;
    std::ofstream out(SysctlPath(name));
    out << value << "\n";
    out.flush();
    if (!out)
      failures += "cannot restore sysctl " + name + "=" + value + "; ";
    else
      std::fprintf(stderr, "real node: restored %s=%s (was %s)\n", name.c_str(), value.c_str(),
                   now.c_str());
  }
  for (const char* family : {"iptables", "ip6tables"})
    if (Status s = DeleteNewChains(family, before.chains); !s.ok()) failures += s.message() + "; ";
  for (const char* p : kWatchedPaths) {
    if (before.paths.count(p) || !fs::exists(fs::symlink_status(p, ec))) continue;
    if (fs::is_directory(fs::symlink_status(p, ec)) && OnlyLeftovers(p))
      fs::remove_all(p, ec);
    else
      failures += std::string(p) + " was created and holds files; ";
  }
  if (failures.empty()) return Status::Ok();
  return Status::Error("restoring the host: " + failures);
}

std::string HostFootprint::ToJson() const {
  return nlohmann::json{{"sysctls", sysctls},
                        {"chains", chains},
                        {"paths", paths},
                        {"cgroups", cgroups},
                        {"mounts", mounts},
                        {"links", links}}
      .dump(1);
}

Result<HostFootprint> HostFootprint::FromJson(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    HostFootprint f;
    f.sysctls = j.at("sysctls").get<std::map<std::string, std::string>>();
    f.chains = j.at("chains").get<std::set<std::string>>();
    f.paths = j.at("paths").get<std::set<std::string>>();
    f.cgroups = j.at("cgroups").get<std::set<std::string>>();
    f.mounts = j.at("mounts").get<std::set<std::string>>();
    f.links = j.at("links").get<std::set<std::string>>();
    return f;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("unreadable host footprint: ") + e.what());
  }
}

}  // namespace graintune::testing
