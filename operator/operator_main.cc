// graintune-operator: keeps a GrainTuning per tuning key, records each attempt's trial from the
// exporters of its pods, and sets the value the webhook gives the next attempt. Two replicas
// elect a leader through a Lease; only the leader reconciles, both serve health endpoints.
//
// Flags: kUsage below (also `graintune-operator --help`).
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
#include "operator/tuning_metrics.h"
#include "workload/cluster_sources.h"
#include "base/log.h"
#include "server/flags.h"
#include "server/https_server.h"

namespace {

std::stop_source g_stop;
void OnSignal(int) { g_stop.request_stop(); }
constexpr char kProgram[] = "graintune-operator";
constexpr char kUsage[] = R"(graintune-operator: records each attempt's trial and sets the next attempt's value.

usage:
  graintune-operator [--kubeconfig K] [--leader-elect=true|false] [--lease-namespace NS]
                     [--lease-name N] [--identity ID]
                     [--resync-period-ms N]   (a running attempt's steps are read this often)
                     [--status-progress-interval-ms N]   (a trial's progress is written at most
                                                          this often; 30000, 0 = every change)
                     [--bind-address A] [--port N] [--scrape-timeout-ms N]
                     [--scrape-concurrency N]   (exporters read at once; 8)
                     [--lease-duration-ms N] [--renew-deadline-ms N] [--retry-period-ms N]
                     [--prometheus-url http(s)://HOST:PORT]   (trials from Prometheus instead)
                     [--forget-after 720h]   (delete GrainTunings without pods or activity)
                     [--log-level error|warning|info|debug]   (debug: a line per reconcile)
)";

}  // namespace

int main(int argc, char** argv) {
  graintune::server::ExitWithHelpIfAsked(argc, argv, kUsage);
  using namespace graintune;
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(server::Arguments(argc, argv),
                                     {"log-level", "kubeconfig", "lease-namespace", "lease-name", "identity",
                                      "resync-period-ms", "status-progress-interval-ms", "scrape-timeout-ms", "scrape-concurrency",
                                      "lease-duration-ms", "renew-deadline-ms",
                                      "retry-period-ms", "prometheus-url", "forget-after",
                                      "bind-address", "port"},
                                     {"leader-elect"}));
  if (!flags.positional().empty())
    server::ExitWithUsageError(kProgram, "unexpected argument '" + flags.positional().front() + "'");
  server::SetUpLogging(kProgram, flags);
  auto int_flag = [&](const char* name, int lo, int hi, int fallback) {
    return server::ExitOnUsageError(kProgram, flags.IntegerIn(name, lo, hi)).value_or(fallback);
  };
  const std::string kubeconfig = flags.Get("kubeconfig").value_or("");
  std::string lease_ns = flags.Get("lease-namespace").value_or("");
  const std::string lease_name = flags.Get("lease-name").value_or("graintune-operator");
  std::string identity = flags.Get("identity").value_or("");
  const bool leader_elect = !flags.Has("leader-elect") || flags.Bool("leader-elect");
  const int resync_ms = int_flag("resync-period-ms", 100, 3600000, 5000);
  const int progress_ms = int_flag("status-progress-interval-ms", 0, 3600000, 30000);
  const int scrape_timeout_ms = int_flag("scrape-timeout-ms", 100, 60000, 3000);
  const int scrape_concurrency = int_flag("scrape-concurrency", 1, 64, 8);
  const int lease_ms = int_flag("lease-duration-ms", 1000, 600000, 15000);
  const int renew_ms = int_flag("renew-deadline-ms", 500, 600000, 10000);
  const int retry_ms = int_flag("retry-period-ms", 100, 600000, 2000);
  const std::string prometheus_url = flags.Get("prometheus-url").value_or("");
  const std::chrono::seconds forget_after =
      server::ExitOnUsageError(kProgram, flags.Duration("forget-after"))
          .value_or(std::chrono::seconds(0));
  server::HttpsServerOptions http;
  http.bind_address = flags.Get("bind-address").value_or("0.0.0.0");
  http.port = static_cast<unsigned short>(int_flag("port", 1, 65535, 8081));
  http.threads = 1;
  http.max_body_bytes = 4096;
  Result<kube::ClientConfig> config = kube::LoadDefaultConfig(kubeconfig);
  if (!config.ok()) {
    LogLine(LogLevel::kError) << config.error();
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
    LogLine(LogLevel::kError) << client.error().ToString();
    return 1;
  }
  // The informers' events queue the tuning keys to reconcile.
  auto keys = std::make_shared<op::KeyEvents>(std::make_shared<op::WorkQueue>());
  op::ControllerCaches caches;
  // Every cache drops managedFields: nothing here reads them, and at thousands of pods they
  // are a large share of the operator's memory.
  const kube::InformerOptions all{.transform = kube::DropManagedFields};
  kube::InformerOptions managed = all;
  managed.label_selector = "graintune.dev/managed=true";
  caches.pods = std::make_shared<kube::Informer>(*client, kube::resources::kPods, managed, keys->ForPods());
  caches.graintunings = std::make_shared<kube::Informer>(*client, kube::resources::kGrainTunings,
                                                         all, keys->ForGrainTunings());
  caches.policies = std::make_shared<kube::Informer>(*client, kube::resources::kGrainTunePolicies,
                                                     all, keys->ForSelectionChanges());
  caches.namespaces = std::make_shared<kube::Informer>(*client, kube::resources::kNamespaces,
                                                       all, keys->ForSelectionChanges());
  caches.nodes = workload::MakeTpuNodeCache(*client);
  caches.configmaps =
      std::make_shared<workload::ConfigMapFetcher>(workload::FetchConfigMapData(*client));
  caches.Start();
  auto recorder = std::make_shared<kube::EventRecorder>(*client, "graintune.dev/operator", identity);
  op::ControllerOptions controller_options{.scrape_timeout = std::chrono::milliseconds(scrape_timeout_ms),
                                           .scrape_concurrency = scrape_concurrency,
                                           .forget_after = forget_after,
                                           .running_requeue = std::chrono::milliseconds(resync_ms),
                                           .progress_write_interval = std::chrono::milliseconds(progress_ms)};
  if (!prometheus_url.empty()) {
    kube::ClientConfig pc;
    pc.server = prometheus_url;
    pc.allow_plain_http = true;
    auto prom = kube::Client::FromConfig(pc);
    if (!prom.ok()) {
      LogLine(LogLevel::kError) << "--prometheus-url: " << prom.error().ToString();
      return 2;
    }
    controller_options.prometheus = *prom;
  }
  op::TuningController controller(*client, caches, recorder, keys, controller_options);

  std::atomic<bool> leading{!leader_elect};
  // Set when this replica starts leading: every key is queued once, for events it may have
  // let pass while it followed.
  std::atomic<bool> enqueue_all{true};
  auto registry = std::make_shared<prometheus::Registry>();
  auto& counter_family = prometheus::BuildCounter()
                             .Name("graintune_operator_total")
                             .Help("Operator activity by kind (reconciles, scrapes, writes, events, "
                                   "attempts that ended early)")
                             .Register(*registry);
  auto& leader_gauge = prometheus::BuildGauge().Name("graintune_operator_leader")
                           .Help("1 while this replica leads").Register(*registry).Add({});
  auto& queue_gauge = prometheus::BuildGauge().Name("graintune_operator_queue_keys")
                          .Help("Tuning keys in the work queue, by state (ready, delayed, processing)")
                          .Register(*registry);
  auto& scrape_gauge = prometheus::BuildGauge().Name("graintune_operator_exporters")
                           .Help("Exporters being read now (in_flight) and whose last read failed (backing_off)")
                           .Register(*registry);
  std::mutex metrics_mu;
  std::map<std::string, double> exported;
  server::HttpsServer server(http, [&](const server::HttpRequest& r) -> server::HttpResponse {
    const std::string path = r.target.substr(0, r.target.find('?'));
    if (path == "/healthz") return {200, "text/plain", "ok\n"};
    if (path == "/readyz")
      return caches.Synced() ? server::HttpResponse{200, "text/plain", "ok\n"}
                             : server::HttpResponse{503, "text/plain", "caches not synced\n"};
    if (path == "/metrics") {
      std::lock_guard<std::mutex> lock(metrics_mu);
      const op::ControllerCounters& c = controller.counters();
      const std::map<std::string, double> now = {
          {"reconcile", c.reconciles}, {"reconcile_error", c.reconcile_errors},
          {"scrape", c.scrapes}, {"scrape_error", c.scrape_errors},
          {"status_write", c.status_writes}, {"status_progress_deferred", c.progress_deferred},
          {"event", c.events}, {"forgotten", c.forgotten}, {"ended_early", c.ended_early},
          {"rejected_answer", c.rejected_answers}};
      for (const auto& [kind, v] : now) {
        counter_family.Add({{"kind", kind}}).Increment(v - exported[kind]);
        exported[kind] = v;
      }
      leader_gauge.Set(leading ? 1 : 0);
      const op::WorkQueueDepth depth = controller.queue_depth();
      queue_gauge.Add({{"state", "ready"}}).Set(static_cast<double>(depth.ready));
      queue_gauge.Add({{"state", "delayed"}}).Set(static_cast<double>(depth.delayed));
      queue_gauge.Add({{"state", "processing"}}).Set(static_cast<double>(depth.processing));
      const op::ScraperFigures scraping = controller.scraper_figures();
      scrape_gauge.Add({{"state", "in_flight"}}).Set(scraping.in_flight);
      scrape_gauge.Add({{"state", "backing_off"}}).Set(scraping.backing_off);
      std::vector<prometheus::MetricFamily> families = registry->Collect();
      for (prometheus::MetricFamily& f : op::TuningMetricFamilies(caches.graintunings->List()))
        families.push_back(std::move(f));
      return {200, "text/plain; version=0.0.4", prometheus::TextSerializer().Serialize(families)};
    }
    return {404, "text/plain", "not found\n"};
  });
  if (Status s = server.Start(); !s.ok()) {
    LogLine(LogLevel::kError) << s.message();
    return 1;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  LogLine(LogLevel::kInfo) << identity << " serving health on " << http.bind_address
            << ":" << server.port();

  std::jthread elector;
  if (leader_elect) {
    kube::LeaderElectionConfig le{.lease_namespace = lease_ns, .lease_name = lease_name,
                                  .identity = identity,
                                  .lease_duration = std::chrono::milliseconds(lease_ms),
                                  .renew_deadline = std::chrono::milliseconds(renew_ms),
                                  .retry_period = std::chrono::milliseconds(retry_ms)};
    if (Status s = kube::ValidateLeaderElection(le); !s.ok()) {
      LogLine(LogLevel::kError) << s.message();
      return 2;
    }
    auto le_client = *client;
    elector = std::jthread([&, le, le_client](std::stop_token) {
      kube::LeaderElector e(le_client, le,
                            {.on_started_leading = [&] {
                               enqueue_all = true;
                               leading = true;
                               LogLine(LogLevel::kInfo) << identity << " is leading";
                             },
                             .on_stopped_leading = [&] {
                               leading = false;
                               LogLine(LogLevel::kInfo) << identity << " stopped leading";
                             }});
      e.Run(g_stop.get_token());
    });
  }
  controller.Run(g_stop.get_token(), [&] {
    if (!leading || !caches.Synced()) return false;
    if (enqueue_all.exchange(false)) controller.EnqueueAll();
    return true;
  });
  if (elector.joinable()) elector.join();
  caches.Stop();
  server.Stop();
  return 0;
}
