#include "tests/controlplane/pod_runner.h"

#include <filesystem>
#include <optional>

#include "kube/backoff.h"

namespace graintune::testing {
namespace {

using kube::Json;

// The sidecar's arguments, with the metrics file moved into this pod's folder here.
std::vector<std::string> ExporterArgs(const Json& sidecar, const std::string& metrics_file,
                                      const std::string& pod_ip) {
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
    args.push_back(v);
  }
  // No shared PID namespace here: an empty /proc, so nothing of this machine is sampled.
  args.insert(args.end(), {"--bind-address", pod_ip, "--poll-interval-ms", "100", "--proc-root",
                           metrics_file + ".proc"});
  return args;
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

void PodRunner::Poll() {
  std::shared_ptr<kube::Client> c = cp_.AdminClient();
  if (!c) return;
  kube::ListOptions lo;
  lo.label_selector = "graintune.dev/managed=true";
  kube::ApiResult<kube::ObjectList> pods = c->List(kube::resources::kPods, "", lo);
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
    std::vector<std::string> exporter = {options_.exporter_binary};
    for (const std::string& a : ExporterArgs(*sidecar, metrics, ip)) exporter.push_back(a);
    // The downward API's metadata.uid, as the kubelet would resolve it.
    Result<ChildProcess> e =
        ChildProcess::Spawn(exporter, dir + "/exporter.log", {"GRAINTUNE_POD_UID=" + uid});
    Result<ChildProcess> t = ChildProcess::Spawn(
        {options_.trainer_binary, "--workers", workers, "--metrics-file", metrics, "--steps",
         std::to_string(options_.steps), "--time-scale", std::to_string(options_.time_scale)},
        dir + "/trainer.log");
    if (!e.ok() || !t.ok()) continue;
    r->exporter = std::move(e).value();
    r->trainer = std::move(t).value();
    running_[uid] = std::move(r);
    started_.push_back(name);
  }
}

}  // namespace graintune::testing
