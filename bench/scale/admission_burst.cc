#include "bench/scale/admission_burst.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace graintune::bench {
namespace {

using kube::Json;

// A Pod of the template that no controller adopts and no scheduler places.
Json BurstPod(const Json& pod_template, const std::string& name) {
  Json meta = pod_template.value("metadata", Json::object());
  Json labels = meta.value("labels", Json::object());
  for (const char* owned : {"controller-uid", "job-name", "batch.kubernetes.io/controller-uid",
                            "batch.kubernetes.io/job-name"})
    labels.erase(owned);
  Json spec = pod_template.value("spec", Json::object());
  spec["schedulerName"] = "graintune-bench-unscheduled";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels},
                        {"annotations", meta.value("annotations", Json::object())}}},
          {"spec", spec}};
}

// Creates `count` pods in `ns` over `concurrency` clients; each POST's milliseconds.
Result<std::vector<double>> Burst(testing::ControlPlane& cp, const BurstOptions& o,
                                  const std::string& ns, const std::string& prefix) {
  std::vector<double> ms(static_cast<size_t>(o.pods), 0);
  std::atomic<int> next{0};
  std::mutex mu;
  std::string error;
  std::vector<std::shared_ptr<kube::Client>> clients;
  for (int t = 0; t < o.concurrency; ++t) {
    auto c = kube::Client::FromConfig(cp.admin_config());
    if (!c.ok()) return c.error().ToStatus();
    clients.push_back(*c);
  }
  std::vector<Json> pods;
  for (int i = 0; i < o.pods; ++i) pods.push_back(BurstPod(o.pod_template, prefix + std::to_string(i)));
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < o.concurrency; ++t)
      threads.emplace_back([&, t] {
        for (int i = next++; i < o.pods; i = next++) {
          const auto start = std::chrono::steady_clock::now();
          kube::ApiResult<Json> made = clients[static_cast<size_t>(t)]->Create(kube::resources::kPods, ns,
                                                                               pods[static_cast<size_t>(i)]);
          ms[static_cast<size_t>(i)] =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
          if (!made.ok()) {
            std::lock_guard<std::mutex> lock(mu);
            error = made.error().ToString();
          }
        }
      });
  }
  if (!error.empty()) return Status::Error("creating a burst pod in " + ns + ": " + error);
  return ms;
}

Status DeleteAll(testing::ControlPlane& cp, const std::string& ns) {
  Result<std::string> out = cp.Kubectl({"delete", "pods", "--all", "-n", ns, "--wait=true",
                                        "--timeout=120s"});
  return out.ok() ? Status::Ok() : Status::Error("deleting the burst pods: " + out.error());
}

}  // namespace

Result<BurstLatencies> MeasureAdmissionBursts(testing::ControlPlane& cp, const BurstOptions& o) {
  BurstLatencies out;
  std::vector<std::pair<std::string, std::vector<double>*>> arms = {{o.hooked_ns, &out.hooked_ms},
                                                                    {o.plain_ns, &out.plain_ms}};
  if (!o.noop_ns.empty()) arms.emplace_back(o.noop_ns, &out.noop_ms);
  for (const auto& [ns, into] : arms)
    if (Result<std::string> made = cp.Kubectl({"apply", "-f", "-"},
                                              Json{{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                   {"metadata", {{"name", ns}}}}.dump());
        !made.ok())
      return Status::Error("creating namespace " + ns + ": " + made.error());
  for (int round = 0; round < o.rounds; ++round) {
    // Each round starts with the next arm, so none always meets a warmer API server.
    for (size_t i = 0; i < arms.size(); ++i) {
      const auto& [ns, into] = arms[(static_cast<size_t>(round) + i) % arms.size()];
      Result<std::vector<double>> ms = Burst(cp, o, ns, "burst-" + std::to_string(round) + "-");
      if (!ms.ok()) return ms.status();
      into->insert(into->end(), ms->begin(), ms->end());
      if (Status s = DeleteAll(cp, ns); !s.ok()) return s;
    }
  }
  return out;
}

}  // namespace graintune::bench
