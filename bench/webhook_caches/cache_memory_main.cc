// cache_memory: what graintune-webhook and graintune-operator hold in memory in a cluster with
// thousands of objects they do not need: ConfigMaps (MaxText-sized YAML), Jobs graintune never
// tuned and CPU Nodes, beside a few TPU Nodes. Each build given runs against the same local
// control plane, in interleaved rounds (A B A B ...); the table gives each one's resident memory
// once it is ready (caches synced), the medians, and the ratio to the first build.
//
//   cache_memory --bin-dir CONTROLPLANE_BIN --crd-dir CRDS
//                --build NAME=WEBHOOK_BIN,OPERATOR_BIN [--build ...]
//                [--objects N] [--rounds R]
// Prints one JSON line last: {"objects":N,"webhook_rss_mib":{NAME:median,...},
//                             "operator_rss_mib":{...}}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/flags.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/https_call.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tests/controlplane/webhook_under_test.h"

namespace {

using graintune::Result;
using graintune::Status;
using graintune::kube::Json;
namespace gt = graintune::testing;

struct Build {
  std::string name, webhook, operator_bin;
};

// Resident set of a process, MiB (VmRSS from /proc).
double RssMib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string MaxTextYaml(int i) {
  std::string yaml = "# run " + std::to_string(i) + "\nmodel_name: llama3-8b\ndataset_type: grain\n";
  while (yaml.size() < 8000) yaml += "some_setting_" + std::to_string(yaml.size()) + ": value\n";
  return yaml;
}

Status Populate(gt::ControlPlane& cp, int objects) {
  auto client = cp.AdminClient();
  const auto created = [](const graintune::kube::ApiResult<Json>& r, const std::string& what) {
    return r.ok() || r.error().IsAlreadyExists() ? Status::Ok()
                                                  : Status::Error(what + ": " + r.status().message());
  };
  for (int i = 0; i < objects; ++i) {
    Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
               {"metadata", {{"name", "cfg-" + std::to_string(i)}, {"namespace", "default"}}},
               {"data", {{"base.yml", MaxTextYaml(i)}}}};
    if (Status s = created(client->Create(graintune::kube::resources::kConfigMaps, "default", cm), "ConfigMap"); !s.ok())
      return s;
    Json job = Json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"namespace": "default"},
      "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}})");
    job["metadata"]["name"] = "job-" + std::to_string(i);
    if (Status s = created(client->Create(graintune::kube::resources::kJobs, "default", job), "Job"); !s.ok())
      return s;
    if (i % 4 == 0) {
      Json node = {{"apiVersion", "v1"}, {"kind", "Node"},
                   {"metadata", {{"name", "cpu-" + std::to_string(i)},
                                 {"labels", {{"node.kubernetes.io/instance-type", "n2-standard-8"}}}}},
                   {"status", {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}}},
                               {"allocatable", {{"cpu", "7910m"}, {"memory", "29Gi"}}}}}};
      if (Status s = created(client->Create(graintune::kube::resources::kNodes, "", node), "Node"); !s.ok())
        return s;
    }
  }
  for (int i = 0; i < 64; ++i) {
    Result<Json> node = gt::TpuNode({.name = "tpu-" + std::to_string(i)});
    if (!node.ok()) return node.status();
    if (Status s = created(client->Create(graintune::kube::resources::kNodes, "", *node), "Node"); !s.ok())
      return s;
  }
  return Status::Ok();
}

// The webhook's resident memory once it is ready (its caches synced), settled for 2 s.
Result<double> WebhookRss(gt::ControlPlane& cp, const Build& b, int round) {
  auto webhook = gt::WebhookUnderTest::Start(
      cp, {.binary = b.webhook, .configuration_name = "bench-" + b.name + "-" + std::to_string(round),
           .register_configuration = false});
  if (!webhook.ok()) return webhook.status();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return RssMib((*webhook)->process().pid());
}

// The operator's, once /readyz answers 200 (caches synced), settled for 2 s.
Result<double> OperatorRss(gt::ControlPlane& cp, const Build& b, int round) {
  Result<int> port = gt::FreeLoopbackPort();
  if (!port.ok()) return port.status();
  const std::string id = "bench-" + b.name + "-" + std::to_string(round);
  Result<gt::ChildProcess> op = gt::ChildProcess::Spawn(
      {b.operator_bin, "--kubeconfig", cp.kubeconfig_path(), "--identity", id,
       "--leader-elect=false", "--bind-address", "127.0.0.1", "--port", std::to_string(*port)},
      cp.dir() + "/" + id + ".log");
  if (!op.ok()) return op.status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (gt::HttpsCall(*port, "", "/readyz").status != 200) {
    if (std::chrono::steady_clock::now() > deadline || !op->Running())
      return Status::Error("operator " + b.name + " never ready: " + gt::TailOfFile(op->log_path()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double rss = RssMib(op->pid());
  op->Stop(std::chrono::seconds(5));
  return rss;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune;
  const server::Flags flags = server::ExitOnUsageError(
      "cache_memory", server::Flags::Parse(server::Arguments(argc, argv),
                                           {"bin-dir", "crd-dir", "build", "objects", "rounds"}));
  std::vector<Build> builds;
  for (const std::string& spec : flags.All("build")) {
    const size_t eq = spec.find('='), comma = spec.find(',');
    if (eq == std::string::npos || comma == std::string::npos || comma < eq)
      server::ExitWithUsageError("cache_memory", "--build wants NAME=WEBHOOK,OPERATOR");
    builds.push_back({spec.substr(0, eq), spec.substr(eq + 1, comma - eq - 1), spec.substr(comma + 1)});
  }
  if (builds.empty()) server::ExitWithUsageError("cache_memory", "at least one --build");
  const int objects = server::ExitOnUsageError("cache_memory", flags.IntegerIn("objects", 1, 100000)).value_or(3000);
  const int rounds = server::ExitOnUsageError("cache_memory", flags.IntegerIn("rounds", 1, 20)).value_or(3);

  gt::ControlPlaneOptions options;
  options.bin_dir = flags.Get("bin-dir").value_or("");
  const std::string crds = flags.Get("crd-dir").value_or("");
  for (const char* crd : {"graintune.dev_graintunepolicies.yaml", "graintune.dev_graintunings.yaml"})
    options.crd_files.push_back(crds + "/" + crd);
  auto cp = gt::ControlPlane::Start(options);
  if (!cp.ok()) {
    std::cerr << "cache_memory: " << cp.error() << "\n";
    return 1;
  }
  std::cerr << "cache_memory: creating " << objects << " ConfigMaps (8 KB), " << objects
            << " Jobs, " << objects / 4 << " CPU Nodes and 64 TPU Nodes\n";
  if (Status s = Populate(**cp, objects); !s.ok()) {
    std::cerr << "cache_memory: " << s.message() << "\n";
    return 1;
  }
  std::map<std::string, std::vector<double>> webhook_rss, operator_rss;
  for (int round = 0; round < rounds; ++round) {
    for (const Build& b : builds) {
      Result<double> w = WebhookRss(**cp, b, round);
      Result<double> o = OperatorRss(**cp, b, round);
      if (!w.ok() || !o.ok()) {
        std::cerr << "cache_memory: " << (w.ok() ? o.error() : w.error()) << "\n";
        return 1;
      }
      webhook_rss[b.name].push_back(*w);
      operator_rss[b.name].push_back(*o);
      std::cerr << "round " << round + 1 << " " << b.name << ": webhook " << *w << " MiB, operator "
                << *o << " MiB\n";
    }
  }
  const std::string first = builds.front().name;
  std::printf("\n%d ConfigMaps (8 KB each), %d Jobs, %d CPU Nodes, 64 TPU Nodes; RSS once ready, "
              "median of %d interleaved rounds\n\n",
              objects, objects, objects / 4, rounds);
  std::printf("%-14s %14s %10s %15s %10s\n", "build", "webhook MiB", "ratio", "operator MiB", "ratio");
  nlohmann::json line = {{"objects", objects}, {"rounds", rounds}};
  for (const Build& b : builds) {
    const double w = Median(webhook_rss[b.name]), o = Median(operator_rss[b.name]);
    std::printf("%-14s %14.1f %10.2f %15.1f %10.2f\n", b.name.c_str(), w, w / Median(webhook_rss[first]),
                o, o / Median(operator_rss[first]));
    line["webhook_rss_mib"][b.name] = w;
    line["operator_rss_mib"][b.name] = o;
  }
  std::printf("\n%s\n", line.dump().c_str());
  return 0;
}
