// graintune-operator: keeps a GrainTuning per tuning key, records each attempt's trial from the
// exporters of its pods, and sets the value the webhook gives the next attempt. Two replicas
// elect a leader through a Lease; only the leader reconciles, both serve health endpoints.
//
//   graintune-operator [--kubeconfig K] [--leader-elect=true|false] [--lease-namespace NS]
//                      [--lease-name N] [--identity ID] [--resync-period-ms N]
//                      [--bind-address A] [--port N] [--scrape-timeout-ms N]
//                      [--lease-duration-ms N] [--renew-deadline-ms N] [--retry-period-ms N]
//                      [--prometheus-url http(s)://HOST:PORT]   (trials from Prometheus instead)
//                      [--forget-after 720h]   (delete GrainTunings without pods or activity)
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

#include "kube/backoff.h"
#include "kube/config.h"
#include "kube/leader_election.h"
#include "operator/tuning_controller.h"
#include "webhook/command_line.h"
#include "webhook/https_server.h"

namespace {

std::stop_source g_stop;
void OnSignal(int) { g_stop.request_stop(); }

int IntFlag(const std::string& flag, const std::string& text, int lo, int hi) {
  return graintune::webhook::IntFlagOrExit("graintune-operator", flag, text, lo, hi);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune;
  std::string kubeconfig, lease_ns, lease_name = "graintune-operator", identity;
  bool leader_elect = true;
  int resync_ms = 5000, scrape_timeout_ms = 3000;
  int lease_ms = 15000, renew_ms = 10000, retry_ms = 2000;
  std::string prometheus_url;
  std::chrono::seconds forget_after{0};
  webhook::HttpsServerOptions http;
  http.bind_address = "0.0.0.0";
  http.port = 8081;
  http.threads = 1;
  http.max_body_bytes = 4096;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "graintune-operator: " << flag << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--kubeconfig") kubeconfig = value();
    else if (flag == "--leader-elect=false") leader_elect = false;
    else if (flag == "--leader-elect=true" || flag == "--leader-elect") leader_elect = true;
    else if (flag == "--lease-namespace") lease_ns = value();
    else if (flag == "--lease-name") lease_name = value();
    else if (flag == "--identity") identity = value();
    else if (flag == "--resync-period-ms") resync_ms = IntFlag(flag, value(), 100, 3600000);
    else if (flag == "--scrape-timeout-ms") scrape_timeout_ms = IntFlag(flag, value(), 100, 60000);
    else if (flag == "--lease-duration-ms") lease_ms = IntFlag(flag, value(), 1000, 600000);
    else if (flag == "--renew-deadline-ms") renew_ms = IntFlag(flag, value(), 500, 600000);
    else if (flag == "--retry-period-ms") retry_ms = IntFlag(flag, value(), 100, 600000);
    else if (flag == "--prometheus-url") prometheus_url = value();
    else if (flag == "--forget-after") forget_after = webhook::DurationFlagOrExit("graintune-operator", flag, value());
    else if (flag == "--bind-address") http.bind_address = value();
    else if (flag == "--port") http.port = static_cast<unsigned short>(IntFlag(flag, value(), 1, 65535));
    else {
      std::cerr << "graintune-operator: unknown flag " << flag << "\n";
      return 2;
    }
  }
  Result<kube::ClientConfig> config = kube::LoadDefaultConfig(kubeconfig);
  if (!config.ok()) {
    std::cerr << "graintune-operator: " << config.error() << "\n";
    return 1;
  }
  if (lease_ns.empty()) lease_ns = config->default_namespace;
  if (identity.empty()) {
    char host[256] = "graintune-operator";
    ::gethostname(host, sizeof(host) - 1);
    identity = std::string(host) + "-" + std::to_string(::getpid());
  }
  auto client = kube::Client::FromConfig(*config);
  if (!client.ok()) {
    std::cerr << "graintune-operator: " << client.error().ToString() << "\n";
    return 1;
  }
  op::ControllerCaches caches;
  kube::InformerOptions managed;
  managed.label_selector = "graintune.dev/managed=true";
  caches.pods = std::make_shared<kube::Informer>(*client, kube::resources::kPods, managed);
  caches.graintunings = std::make_shared<kube::Informer>(*client, kube::resources::kGrainTunings);
  caches.policies = std::make_shared<kube::Informer>(*client, kube::resources::kGrainTunePolicies);
  caches.namespaces = std::make_shared<kube::Informer>(*client, kube::resources::kNamespaces);
  caches.nodes = std::make_shared<kube::Informer>(*client, kube::resources::kNodes);
  caches.configmaps = std::make_shared<kube::Informer>(*client, kube::resources::kConfigMaps);
  caches.Start();
  auto recorder = std::make_shared<kube::EventRecorder>(*client, "graintune.dev/operator", identity);
  op::ControllerOptions controller_options{.scrape_timeout = std::chrono::milliseconds(scrape_timeout_ms),
                                           .forget_after = forget_after};
  if (!prometheus_url.empty()) {
    kube::ClientConfig pc;
    pc.server = prometheus_url;
    pc.allow_plain_http = true;
    auto prom = kube::Client::FromConfig(pc);
    if (!prom.ok()) {
      std::cerr << "graintune-operator: --prometheus-url: " << prom.error().ToString() << "\n";
      return 2;
    }
    controller_options.prometheus = *prom;
  }
  op::TuningController controller(*client, caches, recorder, controller_options);

  std::atomic<bool> leading{!leader_elect};
  auto registry = std::make_shared<prometheus::Registry>();
  auto& counter_family = prometheus::BuildCounter()
                             .Name("graintune_operator_total")
                             .Help("Operator activity by kind (reconciles, scrapes, writes, events)")
                             .Register(*registry);
  auto& leader_gauge = prometheus::BuildGauge().Name("graintune_operator_leader")
                           .Help("1 while this replica leads").Register(*registry).Add({});
  std::mutex metrics_mu;
  std::map<std::string, double> exported;
  webhook::HttpsServer server(http, [&](const webhook::HttpRequest& r) -> webhook::HttpResponse {
    const std::string path = r.target.substr(0, r.target.find('?'));
    if (path == "/healthz") return {200, "text/plain", "ok\n"};
    if (path == "/readyz")
      return caches.Synced() ? webhook::HttpResponse{200, "text/plain", "ok\n"}
                             : webhook::HttpResponse{503, "text/plain", "caches not synced\n"};
    if (path == "/metrics") {
      std::lock_guard<std::mutex> lock(metrics_mu);
      const op::ControllerCounters& c = controller.counters();
      const std::map<std::string, double> now = {
          {"reconcile", c.reconciles}, {"reconcile_error", c.reconcile_errors},
          {"scrape", c.scrapes}, {"scrape_error", c.scrape_errors},
          {"status_write", c.status_writes}, {"event", c.events}, {"forgotten", c.forgotten}};
      for (const auto& [kind, v] : now) {
        counter_family.Add({{"kind", kind}}).Increment(v - exported[kind]);
        exported[kind] = v;
      }
      leader_gauge.Set(leading ? 1 : 0);
      return {200, "text/plain; version=0.0.4",
              prometheus::TextSerializer().Serialize(registry->Collect())};
    }
    return {404, "text/plain", "not found\n"};
  });
  if (Status s = server.Start(); !s.ok()) {
    std::cerr << "graintune-operator: " << s.message() << "\n";
    return 1;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::cerr << "graintune-operator: " << identity << " serving health on " << http.bind_address
            << ":" << server.port() << "\n";

  std::jthread elector;
  if (leader_elect) {
    kube::LeaderElectionConfig le{.lease_namespace = lease_ns, .lease_name = lease_name,
                                  .identity = identity,
                                  .lease_duration = std::chrono::milliseconds(lease_ms),
                                  .renew_deadline = std::chrono::milliseconds(renew_ms),
                                  .retry_period = std::chrono::milliseconds(retry_ms)};
    if (Status s = kube::ValidateLeaderElection(le); !s.ok()) {
      std::cerr << "graintune-operator: " << s.message() << "\n";
      return 2;
    }
    auto le_client = *client;
    elector = std::jthread([&, le, le_client](std::stop_token) {
      kube::LeaderElector e(le_client, le,
                            {.on_started_leading = [&] {
                               leading = true;
                               std::cerr << "graintune-operator: " << identity << " is leading\n";
                             },
                             .on_stopped_leading = [&] {
                               leading = false;
                               std::cerr << "graintune-operator: " << identity << " stopped leading\n";
                             }});
      e.Run(g_stop.get_token());
    });
  }
  while (!g_stop.stop_requested()) {
    if (leading && caches.Synced()) controller.ReconcileAll();
    kube::SleepFor(std::chrono::milliseconds(resync_ms), g_stop.get_token());
  }
  if (elector.joinable()) elector.join();
  caches.Stop();
  server.Stop();
  return 0;
}
