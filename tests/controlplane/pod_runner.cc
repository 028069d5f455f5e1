#include "tests/controlplane/pod_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "kube/backoff.h"
#include "kube/config.h"

namespace graintune::testing {
namespace {

using kube::Json;

// The sidecar's arguments, with the metrics file moved into this pod's folder here.
std::vector<std::string> ExporterArgs(const Json& sidecar, const std::string& metrics_file,
                                      const std::string& pod_ip, bool host_proc) {
  std::vector<std::string> args;
  const Json a = sidecar.value("args", Json::array());
  for (size_t i = 0; i < a.size(); ++i) {
    std::string v = a[i].get<std::string>();
    if (v == "--metrics-file" && i + 1 < a.size()) {
      args.push_back(v);
      args.push_back(metrics_file);
      ++i;
      continue;
    }
    // The kubelet's /dev/termination-log is a file of the pod's here (TerminationMessagePath).
    if (v == "--termination-message-path" && i + 1 < a.size()) {
      args.push_back(v);
      args.push_back(metrics_file + ".termination-log");
      ++i;
      continue;
    }
    args.push_back(v);
  }
  args.insert(args.end(), {"--bind-address", pod_ip, "--poll-interval-ms", "100"});
  // With the emulator there is no shared PID namespace: an empty /proc, so nothing of this
  // machine is sampled. With the pod's own trainer the exporter reads this machine's /proc.
  if (!host_proc) args.insert(args.end(), {"--proc-root", metrics_file + ".proc"});
  return args;
}

// Where a container's mount paths are here: mount path -> folder of this pod's.
using MountMap = std::vector<std::pair<std::string, std::string>>;

bool IsPathCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-';
}

// `text` with each mount path that is a whole path or a path's leading folders (where no path
// character comes before it, and the path ends or goes on with '/' after it) replaced by its
// folder here, in one pass (a folder written here is never matched again), the longest first.
std::string MapMounts(const std::string& text, const MountMap& mounts) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const std::pair<std::string, std::string>* best = nullptr;
    if (i == 0 || !IsPathCharacter(text[i - 1]))
      for (const auto& m : mounts) {
        const size_t end = i + m.first.size();
        if (!m.first.empty() && text.compare(i, m.first.size(), m.first) == 0 &&
            (end == text.size() || text[end] == '/' || !IsPathCharacter(text[end])) &&
            (best == nullptr || m.first.size() > best->first.size()))
          best = &m;
      }
    if (best != nullptr) {
      out += best->second;
      i += best->first.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// A container's mounts, each volume at its folder here (`folders`, by volume name).
MountMap MountsOf(const Json& container, const std::map<std::string, std::string>& folders) {
  MountMap mounts;
  for (const Json& m : container.value("volumeMounts", Json::array())) {
    auto at = folders.find(m.value("name", ""));
    if (at != folders.end()) mounts.emplace_back(m.value("mountPath", ""), at->second);
  }
  return mounts;
}

// The annotation a downward-API item shows (`metadata.annotations['KEY']`), or "".
std::string AnnotationOfItem(const Json& item) {
  const std::string field = item.value("/fieldRef/fieldPath"_json_pointer, std::string());
  const std::string prefix = "metadata.annotations['";
  if (field.rfind(prefix, 0) != 0 || !field.ends_with("']")) return "";
  return field.substr(prefix.size(), field.size() - prefix.size() - 2);
}

// argv[0] as execve needs it: a path, looked up on the PATH given (the container's).
std::string OnPath(const std::string& command, const std::string& path) {
  if (command.find('/') != std::string::npos) return command;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string candidate = path.substr(start, end - start) + "/" + command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return command;
}

}  // namespace

PodRunner::PodRunner(ControlPlane& cp, PodRunnerOptions options)
    : cp_(cp), options_(std::move(options)) {}

PodRunner::~PodRunner() { Stop(); }

void PodRunner::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      Poll();
      std::unique_lock<std::mutex> lock(wake_mu_);
      wake_.wait_for(lock, stop, std::chrono::milliseconds(300), [this] { return woken_; });
      woken_ = false;
    }
  });
  watch_ = std::jthread([this](std::stop_token stop) {
    kube::WatchOptions watch;
    watch.label_selector = "graintune.dev/managed=true";
    while (!stop.stop_requested()) {
      std::shared_ptr<kube::Client> c = cp_.AdminClient();
      const bool watched = c && c->Watch(kube::resources::kPods, options_.ns, watch,
                                          [this](const kube::WatchEvent&) {
                                            {
                                              std::lock_guard<std::mutex> lock(wake_mu_);
                                              woken_ = true;
                                            }
                                            wake_.notify_one();
                                            return true;
                                          },
                                          stop)
                                    .ok();
      // The watch ended (the server's timeout) or failed: watch again; the poll goes on meanwhile.
      if (!watched) kube::SleepFor(std::chrono::milliseconds(300), stop);
    }
  });
}

void PodRunner::Stop() {
  for (std::jthread* t : {&watch_, &thread_})
    if (t->joinable()) {
      t->request_stop();
      t->join();
    }
  std::lock_guard<std::mutex> lock(mu_);
  running_.clear();
}

std::vector<std::string> PodRunner::Started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

std::optional<int> PodRunner::TrainerPid(const std::string& pod_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [uid, r] : running_)
    if (r->name == pod_name && r->trainer.pid() > 0) return r->trainer.pid();
  return std::nullopt;
}

std::string PodRunner::PodDir(const std::string& pod_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [uid, r] : running_)
    if (r->name == pod_name) return r->dir;
  return "";
}

Result<ChildProcess> PodRunner::StartOwnTrainer(const Json& pod, const Json& sidecar,
                                                const OwnTrainer& own, Running& running) const {
  const Json spec = pod.value("spec", Json::object());
  const Json sidecar_mounts = sidecar.value("volumeMounts", Json::array());
  const std::string metrics_volume = sidecar_mounts.is_array() && !sidecar_mounts.empty() && sidecar_mounts[0].is_object()
                                         ? sidecar_mounts[0].value("name", "")
                                         : "";
  // The trainer is the container that mounts the exporter's volume: the webhook pointed
  // MaxText's metrics_file into it.
  std::optional<Json> trainer;
  for (const Json& c : spec.value("containers", Json::array()))
    for (const Json& m : c.value("volumeMounts", Json::array()))
      if (m.value("name", "") == metrics_volume) trainer = c;
  if (!trainer) return Status::Error("no container mounts the " + metrics_volume + " volume");
  // The exporter's volume is the pod's folder here; every other volume a folder in it.
  std::map<std::string, std::string> folders = {{metrics_volume, running.dir}};
  for (const Json& v : spec.value("volumes", Json::array())) {
    const std::string name = v.value("name", "");
    if (name.empty() || name == metrics_volume) continue;
    const std::string folder = running.dir + "/volume-" + name;
    std::filesystem::create_directories(folder);
    folders[name] = folder;
    for (const Json& item : v.value("/downwardAPI/items"_json_pointer, Json::array()))
      if (const std::string key = AnnotationOfItem(item); !key.empty())
        running.downward.push_back({folder + "/" + item.value("path", ""), key});
  }
  // graintune's launcher installer, as the init container it is (it runs before the trainer).
  const std::string launcher = options_.lapped ? options_.lapped->launcher_binary : options_.launcher_binary;
  for (const Json& ic : spec.value("initContainers", Json::array())) {
    const Json command = ic.value("command", Json::array());
    if (ic.value("name", "") != "graintune-launcher-install" || command.size() != 3 || !command[2].is_string())
      continue;
    if (launcher.empty())
      return Status::Error("graintune-launcher wraps the pod's trainer, and this runner has no launcher_binary");
    const std::string into = MapMounts(command[2].get<std::string>(), MountsOf(ic, folders));
    if (std::system((launcher + " --install '" + into + "'").c_str()) != 0)
      return Status::Error("the launcher's installer failed into " + into);
  }
  const MountMap mounts = MountsOf(*trainer, folders);
  std::vector<std::string> env;
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  for (const Json& e : trainer->value("env", Json::array()))
    if (e.contains("value") && e["value"].is_string())
      env.push_back(e.value("name", "") + "=" + MapMounts(e["value"], mounts));
  if (own.own_home) {
    std::filesystem::create_directories(running.dir + "/home");
    env.push_back("HOME=" + running.dir + "/home");
  }
  for (const std::string& e : own.env) {
    env.push_back(e);
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  std::vector<std::string> argv;
  for (const char* list : {"command", "args"})
    for (const Json& a : trainer->value(list, Json::array()))
      if (a.is_string()) argv.push_back(MapMounts(a.get<std::string>(), mounts));
  if (argv.empty()) return Status::Error("the trainer container has no command");
  argv[0] = OnPath(argv[0], path);
  WriteDownwardFiles(running, pod["metadata"].value("annotations", Json::object()));
  return ChildProcess::Spawn(argv, running.dir + "/trainer.log", env);
}

void PodRunner::WriteDownwardFiles(const Running& running, const Json& annotations) {
  for (const DownwardFile& f : running.downward) {
    const std::string value = annotations.value(f.annotation, "");
    Result<std::string> now = kube::ReadFileText(f.file);
    if (now.ok() && *now == value) continue;
    // Replaced whole, as the kubelet swaps its files, so no reader sees half a value.
    if (WriteFile(f.file + ".tmp", value).ok()) {
      std::error_code ec;
      std::filesystem::rename(f.file + ".tmp", f.file, ec);
    }
  }
}

void PodRunner::Poll() {
  std::shared_ptr<kube::Client> c = cp_.AdminClient();
  if (!c) return;
  kube::ListOptions lo;
  lo.label_selector = "graintune.dev/managed=true";
  kube::ApiResult<kube::ObjectList> pods = c->List(kube::resources::kPods, options_.ns, lo);
  if (!pods.ok()) return;
  std::map<std::string, const Json*> live;
  // A pod being deleted is gone here, as its containers are on a kubelet: KWOK hands its IP to
  // the next pod at once, while the pod still lists as Running.
  for (const Json& p : pods->items) {
    const Json status = p.value("status", Json::object());
    if (status.value("phase", "") == "Running" && !status.value("podIP", "").empty() &&
        !p["metadata"].contains("deletionTimestamp"))
      live[p["metadata"].value("uid", "")] = &p;
  }
  std::lock_guard<std::mutex> lock(mu_);
  // One pod per address, as on a real node: a pod whose IP another live pod now has is gone too
  // (its exporter would keep the address, and another pod's scrape would reach it).
  // Of two live pods with one IP, the newer has it (KWOK gave it on when the older let go).
  std::map<std::string, std::string> uid_of_ip;
  auto created = [&](const std::string& uid) {
    return (*live[uid])["metadata"].value("creationTimestamp", "");
  };
  for (const auto& [uid, pod] : live) {
    std::string& holder = uid_of_ip[(*pod)["status"].value("podIP", "")];
    if (holder.empty() || created(uid) > created(holder)) holder = uid;
  }
  for (auto it = running_.begin(); it != running_.end();)
    it = live.count(it->first) && uid_of_ip[it->second->ip] == it->first ? std::next(it) : running_.erase(it);
  for (const auto& [uid, r] : running_)
    WriteDownwardFiles(*r, (*live[uid])["metadata"].value("annotations", Json::object()));
  for (const auto& [uid, pod] : live) {
    if (running_.count(uid) || uid_of_ip[(*pod)["status"].value("podIP", "")] != uid) continue;
    const Json meta = (*pod)["metadata"];
    const Json spec = (*pod)["spec"];
    const std::string name = meta.value("name", "");
    const std::string ip = (*pod)["status"].value("podIP", "");
    const std::string workers =
        meta.value("annotations", Json::object()).value("graintune.dev/worker-count", "");
    std::optional<Json> sidecar;  // a copy: value() returns a temporary
    for (const Json& ic : spec.value("initContainers", Json::array()))
      if (ic.value("name", "") == "graintune-exporter") sidecar = ic;
    // A lap's pod has the volume of its answer (a start check alone has none).
    bool lapped = false;
    for (const Json& v : spec.value("volumes", Json::array()))
      lapped = lapped || v.value("name", "") == "graintune-lap-value";
    if (!sidecar || workers.empty()) continue;
    const std::string dir = cp_.dir() + "/pods/" + name + "-" + uid.substr(0, 8);
    std::filesystem::create_directories(dir);
    const std::string metrics = dir + "/metrics.jsonl";
    std::filesystem::create_directories(metrics + ".proc");
    auto r = std::make_unique<Running>();
    r->name = name;
    r->dir = dir;
    r->ip = ip;
    // The trainer this pod runs here: a lapped pod its own command, launcher and all.
    const OwnTrainer* own = lapped && options_.lapped ? &options_.lapped->trainer
                            : options_.own_trainer    ? &*options_.own_trainer
                                                      : nullptr;
    std::vector<std::string> exporter = {options_.exporter_binary};
    for (const std::string& a : ExporterArgs(*sidecar, metrics, ip, own != nullptr)) exporter.push_back(a);
    if (own != nullptr && !own->trainer_pattern.empty())
      exporter.insert(exporter.end(), {"--trainer-pattern", own->trainer_pattern});
    // The downward API's metadata.uid, as the kubelet would resolve it.
    Result<ChildProcess> e =
        ChildProcess::Spawn(exporter, dir + "/exporter.log", {"GRAINTUNE_POD_UID=" + uid});
    Result<ChildProcess> t =
        own != nullptr ? StartOwnTrainer(*pod, *sidecar, *own, *r)
                       : ChildProcess::Spawn({options_.trainer_binary, "--workers", workers, "--metrics-file",
                                              metrics, "--steps", std::to_string(options_.steps),
                                              "--time-scale", std::to_string(options_.time_scale)},
                                             dir + "/trainer.log");
    if (!t.ok()) {
      // Written where the test looks for the trainer's output, so a failure says why.
      (void)WriteFile(dir + "/trainer.log", "cannot start the trainer: " + t.error() + "\n");
      continue;
    }
    if (!e.ok()) continue;
    r->exporter = std::move(e).value();
    r->trainer = std::move(t).value();
    running_[uid] = std::move(r);
    started_.push_back(name);
  }
}

}  // namespace graintune::testing
