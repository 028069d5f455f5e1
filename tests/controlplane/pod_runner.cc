#include "tests/controlplane/pod_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "kube/backoff.h"

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

// The folder the exporter's --metrics-file is in: the metrics volume's mount path.
std::string MetricsMountPath(const Json& sidecar) {
  const Json a = sidecar.value("args", Json::array());
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == "--metrics-file") {
      const std::string file = a[i + 1].get<std::string>();
      return file.substr(0, file.rfind('/'));
    }
  return "";
}

// `text` with every occurrence of `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
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
      kube::SleepFor(std::chrono::milliseconds(300), stop);
    }
  });
}

void PodRunner::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
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

Result<ChildProcess> PodRunner::StartOwnTrainer(const Json& spec, const Json& sidecar,
                                                const std::string& dir) const {
  const std::string mount = MetricsMountPath(sidecar);
  const Json mounts = sidecar.value("volumeMounts", Json::array());
  const std::string volume =
      mounts.is_array() && !mounts.empty() && mounts[0].is_object() ? mounts[0].value("name", "") : "";
  // The trainer is the container that mounts the exporter's volume: the webhook pointed
  // MaxText's metrics_file into it.
  std::optional<Json> trainer;
  for (const Json& c : spec.value("containers", Json::array()))
    for (const Json& m : c.value("volumeMounts", Json::array()))
      if (m.value("name", "") == volume) trainer = c;
  if (!trainer) return Status::Error("no container mounts the " + volume + " volume");
  std::vector<std::string> env;
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  for (const Json& e : trainer->value("env", Json::array()))
    if (e.contains("value") && e["value"].is_string())
      env.push_back(e.value("name", "") + "=" + ReplaceAll(e["value"], mount, dir));
  for (const std::string& e : options_.own_trainer->env) {
    env.push_back(e);
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  std::vector<std::string> argv;
  for (const char* list : {"command", "args"})
    for (const Json& a : trainer->value(list, Json::array()))
      if (a.is_string()) argv.push_back(ReplaceAll(a.get<std::string>(), mount, dir));
  if (argv.empty()) return Status::Error("the trainer container has no command");
  argv[0] = OnPath(argv[0], path);
  return ChildProcess::Spawn(argv, dir + "/trainer.log", env);
}

void PodRunner::Poll() {
  std::shared_ptr<kube::Client> c = cp_.AdminClient();
  if (!c) return;
  kube::ListOptions lo;
  lo.label_selector = "graintune.dev/managed=true";
  kube::ApiResult<kube::ObjectList> pods = c->List(kube::resources::kPods, options_.ns, lo);
  if (!pods.ok()) return;
  std::map<std::string, const Json*> live;
  for (const Json& p : pods->items) {
    const Json status = p.value("status", Json::object());
    if (status.value("phase", "") == "Running" && !status.value("podIP", "").empty())
      live[p["metadata"].value("uid", "")] = &p;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = running_.begin(); it != running_.end();)
    it = live.count(it->first) ? std::next(it) : running_.erase(it);
  for (const auto& [uid, pod] : live) {
    if (running_.count(uid)) continue;
    const Json meta = (*pod)["metadata"];
    const Json spec = (*pod)["spec"];
    const std::string name = meta.value("name", "");
    const std::string ip = (*pod)["status"].value("podIP", "");
    const std::string workers =
        meta.value("annotations", Json::object()).value("graintune.dev/worker-count", "");
    std::optional<Json> sidecar;  // a copy: value() returns a temporary
    for (const Json& ic : spec.value("initContainers", Json::array()))
      if (ic.value("name", "") == "graintune-exporter") sidecar = ic;
    if (!sidecar || workers.empty()) continue;
    const std::string dir = cp_.dir() + "/pods/" + name + "-" + uid.substr(0, 8);
    std::filesystem::create_directories(dir);
    const std::string metrics = dir + "/metrics.jsonl";
    std::filesystem::create_directories(metrics + ".proc");
    auto r = std::make_unique<Running>();
    r->name = name;
    r->dir = dir;
    const bool own = options_.own_trainer.has_value();
    std::vector<std::string> exporter = {options_.exporter_binary};
    for (const std::string& a : ExporterArgs(*sidecar, metrics, ip, own)) exporter.push_back(a);
    if (own && !options_.own_trainer->trainer_pattern.empty())
      exporter.insert(exporter.end(), {"--trainer-pattern", options_.own_trainer->trainer_pattern});
    // The downward API's metadata.uid, as the kubelet would resolve it.
    Result<ChildProcess> e =
        ChildProcess::Spawn(exporter, dir + "/exporter.log", {"GRAINTUNE_POD_UID=" + uid});
    Result<ChildProcess> t =
        own ? StartOwnTrainer(spec, *sidecar, dir)
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
