// graintune-webhook: the mutating admission webhook. Parses flags and wires the parts.
//
// Flags: kUsage below (also `graintune-webhook --help`).
// With API access (--kubeconfig, in-cluster, $KUBECONFIG or ~/.kube/config) host shapes come
// from a watched cache of TPU Nodes, mounted MaxText YAML from ConfigMaps read by name when a
// job mounts one (a small cache, no watch), history from GrainTunings and policies from
// GrainTunePolicies; /readyz waits for every cache. --standalone (or no reachable configuration) uses the machine-type table
// alone.
//
// /healthz, /readyz and /metrics are also served over plain HTTP on --health-port (default
// 8081, 0: off) by a thread of their own, so no admission in progress can delay a probe.
// On SIGTERM the webhook turns unready, keeps serving for --shutdown-delay (5s: the API server
// learns the endpoint is gone), then drains: requests in progress are answered, for at most
// --shutdown-grace (20s); the chart's terminationGracePeriodSeconds covers both.
#include <csignal>
#include <optional>
#include <iostream>
#include <thread>

#include "kube/config.h"
#include "kube/informer.h"
#include "webhook/exporter_flags.h"
#include "webhook/admission.h"
#include "kube/backoff.h"
#include "workload/cluster_sources.h"
#include "workload/workload_annotations.h"
#include "workload/graintune_objects.h"
#include "webhook/serving_certificates.h"
#include "workload/yaml_json.h"
#include "workload/in_memory_sources.h"
#include "base/log.h"
#include "server/flags.h"
#include "server/https_server.h"
#include "webhook/webhook_routes.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
constexpr char kProgram[] = "graintune-webhook";
constexpr char kUsage[] = R"(graintune-webhook: graintune's mutating admission webhook.

usage:
  graintune-webhook --tls-cert-file F --tls-key-file F [--bind-address A] [--port N] [--threads N]
                    [--kubeconfig K | --standalone [--policy-file P.yaml]]
                    [--exclude-namespace NS]...
                    [--exporter-image IMG] [--exporter-port N] [--share-process-namespace]
                    [--exporter-cpu-request Q] [--exporter-memory-request Q]
                    [--exporter-memory-limit Q] [--no-exporter]
                    [--health-port N] [--max-connections N] [--max-idle-per-source N]
                    [--max-inflight-body-mib N]
                    [--header-timeout D] [--read-timeout D] [--idle-timeout D]
                    [--max-json-values N] [--max-sites N] [--max-request-ms N]
                    [--shutdown-delay D] [--shutdown-grace D]
                    [--log-level error|warning|info|debug]   (debug: a line per admission)
                    [--cert-secret NS/NAME --cert-dir DIR --service-dns-name DNS...
                     --webhook-configuration NAME]   (self-managed certificates)
)";
}  // namespace

int main(int argc, char** argv) {
  graintune::server::ExitWithHelpIfAsked(argc, argv, kUsage);
  using namespace graintune;
  using namespace graintune::webhook;
  std::set<std::string> value_flags = {"log-level", "tls-cert-file", "tls-key-file", "bind-address", "port",
                                      "threads", "exclude-namespace", "kubeconfig", "cert-secret",
                                      "webhook-configuration", "service-dns-name", "cert-dir",
                                      "policy-file", "health-port", "max-connections",
                                      "max-idle-per-source",
                                      "max-inflight-body-mib", "header-timeout", "read-timeout",
                                      "idle-timeout", "max-json-values", "max-sites",
                                      "max-request-ms", "shutdown-delay", "shutdown-grace"};
  std::set<std::string> boolean_flags = {"standalone"};
  value_flags.insert(ExporterValueFlags().begin(), ExporterValueFlags().end());
  boolean_flags.insert(ExporterBooleanFlags().begin(), ExporterBooleanFlags().end());
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(server::Arguments(argc, argv), value_flags, boolean_flags));
  if (!flags.positional().empty())
    server::ExitWithUsageError(kProgram, "unexpected argument '" + flags.positional().front() + "'");
  server::SetUpLogging(kProgram, flags);
  server::HttpsServerOptions options;
  options.cert_file = flags.Get("tls-cert-file").value_or("");
  options.key_file = flags.Get("tls-key-file").value_or("");
  options.bind_address = flags.Get("bind-address").value_or("0.0.0.0");
  options.port = static_cast<unsigned short>(
      server::ExitOnUsageError(kProgram, flags.IntegerIn("port", 1, 65535)).value_or(8443));
  if (auto threads = server::ExitOnUsageError(kProgram, flags.IntegerIn("threads", 1, 64)))
    options.threads = *threads;
  auto integer = [&](const char* name, int lo, int hi, int fallback) {
    return server::ExitOnUsageError(kProgram, flags.IntegerIn(name, lo, hi)).value_or(fallback);
  };
  auto seconds = [&](const char* name, std::chrono::seconds fallback) {
    return server::ExitOnUsageError(kProgram, flags.Duration(name)).value_or(fallback);
  };
  options.max_connections = integer("max-connections", 1, 65536, options.max_connections);
  options.max_idle_per_source = integer("max-idle-per-source", 1, 65536, options.max_idle_per_source);
  options.max_inflight_body_bytes =
      static_cast<size_t>(integer("max-inflight-body-mib", 3, 4096,
                                  static_cast<int>(options.max_inflight_body_bytes >> 20)))
      << 20;
  options.header_timeout_seconds = static_cast<int>(
      seconds("header-timeout", std::chrono::seconds(options.header_timeout_seconds)).count());
  options.read_timeout_seconds = static_cast<int>(
      seconds("read-timeout", std::chrono::seconds(options.read_timeout_seconds)).count());
  // The API server keeps idle webhook connections for 90 s (Go's default): closing ours
  // earlier races its next request on that connection, which fails ("broken pipe") and is
  // admitted unchanged. Seen at 2,048 hosts: a Job retry kept attempt 0's value.
  options.idle_timeout_seconds = static_cast<int>(seconds("idle-timeout", std::chrono::seconds(120)).count());
  for (auto [name, value] : {std::pair{"header-timeout", options.header_timeout_seconds},
                             std::pair{"read-timeout", options.read_timeout_seconds},
                             std::pair{"idle-timeout", options.idle_timeout_seconds}})
    if (value < 1 || value > 3600)
      server::ExitWithUsageError(kProgram, std::string("--") + name + " must be in [1s, 1h]");
  const int health_port = integer("health-port", 0, 65535, 8081);
  const std::chrono::seconds shutdown_delay = seconds("shutdown-delay", std::chrono::seconds(5));
  const std::chrono::seconds shutdown_grace = seconds("shutdown-grace", std::chrono::seconds(20));
  AdmitterOptions admit;
  admit.limits.max_json_values = static_cast<size_t>(
      integer("max-json-values", 1000, 10'000'000, static_cast<int>(admit.limits.max_json_values)));
  admit.limits.max_sites = integer("max-sites", 1, 1'000'000, admit.limits.max_sites);
  admit.limits.max_time = std::chrono::milliseconds(
      integer("max-request-ms", 1, 60'000, static_cast<int>(admit.limits.max_time.count())));
  for (const std::string& ns : flags.All("exclude-namespace")) admit.excluded_namespaces.insert(ns);
  admit.exporter = server::ExitOnUsageError(kProgram, ExporterFromFlags(flags));
  const std::string kubeconfig = flags.Get("kubeconfig").value_or("");
  const bool standalone = flags.Bool("standalone");
  ServingCertificateOptions self_signed;
  if (auto secret = flags.Get("cert-secret")) {
    const size_t slash = secret->find('/');
    if (slash == std::string::npos)
      server::ExitWithUsageError(kProgram, "--cert-secret wants NAMESPACE/NAME");
    self_signed.secret_namespace = secret->substr(0, slash);
    self_signed.secret_name = secret->substr(slash + 1);
  }
  self_signed.webhook_configuration = flags.Get("webhook-configuration").value_or("");
  self_signed.dns_names = flags.All("service-dns-name");
  const std::string cert_dir = flags.Get("cert-dir").value_or("");
  const std::string policy_file = flags.Get("policy-file").value_or("");
  const bool manage_certs = !self_signed.secret_name.empty();
  if (manage_certs) {
    if (cert_dir.empty() || self_signed.dns_names.empty()) {
      LogLine(LogLevel::kError) << "--cert-secret needs --cert-dir and --service-dns-name";
      return 2;
    }
    options.cert_file = self_signed.cert_file = cert_dir + "/tls.crt";
    options.key_file = self_signed.key_file = cert_dir + "/tls.key";
  }
  if (options.cert_file.empty() || options.key_file.empty()) {
    LogLine(LogLevel::kError) << "--tls-cert-file and --tls-key-file (or --cert-secret) are "
                 "required";
    return 2;
  }
  // Sources: the API server's caches when reachable, else the built-in table.
  std::shared_ptr<kube::Informer> nodes, graintunings, policies, namespaces, jobs;
  workload::TpuNodeCache node_cache;
  std::shared_ptr<kube::Client> configmap_client;
  std::shared_ptr<kube::Client> cert_client;
  if (manage_certs && standalone) {
    LogLine(LogLevel::kError) << "--cert-secret needs API access, not --standalone";
    return 2;
  }
  if (!standalone) {
    Result<kube::ClientConfig> config =
        kube::LoadDefaultConfig(kubeconfig);
    if (!config.ok() && !kubeconfig.empty()) {
      LogLine(LogLevel::kError) << config.error();
      return 1;
    }
    if (!config.ok()) {
      LogLine(LogLevel::kWarning) << "no API access (" << config.error()
                << "); running standalone on the machine-type table";
    } else {
      auto client = kube::Client::FromConfig(*config);
      if (!client.ok()) {
        LogLine(LogLevel::kError) << client.error().ToString();
        return 1;
      }
      if (manage_certs) {
        // Serving needs the pair: retry for a minute, then give up (the pod restarts).
        kube::Backoff backoff(std::chrono::milliseconds(500), std::chrono::seconds(8));
        Result<bool> ensured = Status::Error("not tried");
        for (int i = 0; i < 12 && !ensured.ok(); ++i) {
          ensured = EnsureServingCertificate(**client, self_signed);
          if (!ensured.ok()) {
            LogLine(LogLevel::kWarning) << "serving certificate: " << ensured.error();
            std::this_thread::sleep_for(backoff.Next());
          }
        }
        if (!ensured.ok()) return 1;
        cert_client = *client;
      }
      // Only what a decision reads is cached: TPU Nodes (their labels and allocatable only),
      // graintune's objects, Namespaces (for
      // policy selectors) and the Jobs graintune tuned (pod retries count as attempts). The
      // few ConfigMaps a tuned job mounts are read by name when needed, never watched.
      node_cache = workload::MakeTpuNodeCache(*client);
      nodes = node_cache.informer;
      kube::ClientOptions short_requests;
      short_requests.request_timeout = std::chrono::milliseconds(750);
      short_requests.max_response_bytes = 2u << 20;  // a ConfigMap is at most 1 MiB
      auto fetch_client = kube::Client::FromConfig(*config, short_requests);
      if (!fetch_client.ok()) {
        LogLine(LogLevel::kError) << fetch_client.error().ToString();
        return 1;
      }
      configmap_client = *fetch_client;
      graintunings = std::make_shared<kube::Informer>(
          *client, kube::resources::kGrainTunings);
      policies = std::make_shared<kube::Informer>(
          *client, kube::resources::kGrainTunePolicies);
      namespaces = std::make_shared<kube::Informer>(
          *client, kube::resources::kNamespaces);
      jobs = std::make_shared<kube::Informer>(
          *client, kube::resources::kJobs,
          kube::InformerOptions{.label_selector = std::string(workload::kManagedLabel) + "=true",
                                .transform = kube::DropManagedFields});
      for (auto* i : {&nodes, &graintunings, &policies, &namespaces, &jobs}) (*i)->Start();
    }
  }
  workload::MachineTypeTableShapes table_shapes;
  std::unique_ptr<workload::NodeShapeSource> cluster_shapes;
  std::unique_ptr<workload::ConfigMapSource> cluster_configmaps;
  std::unique_ptr<workload::HistorySource> cluster_history;
  std::unique_ptr<workload::PolicySource> cluster_policies;
  std::unique_ptr<workload::JobStatusSource> cluster_jobs;
  if (nodes) {
    cluster_jobs = std::make_unique<workload::JobCache>(jobs);
    cluster_shapes = std::make_unique<workload::NodeCacheShapes>(node_cache);
    cluster_configmaps = std::make_unique<workload::ConfigMapFetcher>(
        workload::FetchConfigMapData(configmap_client));
    cluster_history = std::make_unique<workload::GrainTuningHistory>(graintunings);
    cluster_policies = std::make_unique<workload::PolicyCache>(policies, namespaces);
  }
  workload::InMemoryHistory no_history;
  workload::InMemoryConfigMaps no_configmaps;
  workload::FixedPolicy default_policy;
  std::optional<workload::StaticPolicies> file_policies;
  if (!policy_file.empty()) {
    if (!standalone && nodes) {
      LogLine(LogLevel::kError) << "--policy-file is for --standalone; in a cluster policies are "
                   "GrainTunePolicy objects";
      return 2;
    }
    Result<std::string> text = kube::ReadFileText(policy_file);
    Result<std::vector<nlohmann::json>> docs =
        text.ok() ? workload::ParseYamlDocuments(*text)
                  : Result<std::vector<nlohmann::json>>(text.status());
    Result<workload::StaticPolicies> loaded =
        docs.ok() ? workload::StaticPolicies::FromObjects(*docs) : Result<workload::StaticPolicies>(docs.status());
    if (!loaded.ok()) {
      LogLine(LogLevel::kError) << "--policy-file " << policy_file << ": " << loaded.error();
      return 2;
    }
    file_policies = std::move(loaded).value();
  }
  workload::NodeShapeSource& shapes = cluster_shapes ? *cluster_shapes : table_shapes;
  workload::ConfigMapSource& configmap_source =
      cluster_configmaps ? *cluster_configmaps : static_cast<workload::ConfigMapSource&>(no_configmaps);
  workload::HistorySource& history = cluster_history ? *cluster_history : static_cast<workload::HistorySource&>(no_history);
  workload::PolicySource& policy_source =
      cluster_policies ? *cluster_policies
      : file_policies  ? static_cast<workload::PolicySource&>(*file_policies)
                       : static_cast<workload::PolicySource&>(default_policy);
  Admitter admitter(
      PlannerSources{shapes, history, configmap_source, policy_source, cluster_jobs.get()}, admit);
  WebhookMetrics metrics;
  WebhookRoutes routes(admitter, metrics);
  options.on_connection_shed = [&metrics](server::ShedReason reason) {
    metrics.ConnectionShed(server::ShedReasonName(reason));
  };
  // Not ready until the caches are: the API server then sends requests to a replica that is.
  routes.SetReady(!nodes);
  server::HttpsServer server(options, [&](const server::HttpRequest& r) { return routes.Handle(r); });
  if (Status s = server.Start(); !s.ok()) {
    LogLine(LogLevel::kError) << s.message();
    return 1;
  }
  LogLine(LogLevel::kInfo) << "serving on " << options.bind_address << ":" << server.port();
  std::optional<server::HttpsServer> probes;
  if (health_port > 0) {
    server::HttpsServerOptions probe_options;
    probe_options.bind_address = options.bind_address;
    probe_options.port = static_cast<unsigned short>(health_port);
    probe_options.threads = 1;
    probe_options.max_body_bytes = 4096;
    probe_options.max_connections = 64;
    probes.emplace(probe_options, [&](const server::HttpRequest& r) { return routes.HandleProbe(r); });
    if (Status s = probes->Start(); !s.ok()) {
      LogLine(LogLevel::kError) << "health port: " << s.message();
      return 1;
    }
    LogLine(LogLevel::kInfo) << "probes and metrics on http://" << options.bind_address << ":"
              << probes->port();
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  auto next_cert_check = std::chrono::steady_clock::now() + std::chrono::hours(12);
  while (!g_stop) {
    if (cert_client && std::chrono::steady_clock::now() > next_cert_check) {
      // Re-issue ahead of expiry; the server picks the new files up by itself.
      Result<bool> r = EnsureServingCertificate(*cert_client, self_signed);
      if (!r.ok()) LogLine(LogLevel::kError) << "certificate renewal: " << r.error();
      next_cert_check = std::chrono::steady_clock::now() +
                        (r.ok() ? std::chrono::hours(12) : std::chrono::hours(1));
    }
    if (nodes && nodes->Synced() && graintunings->Synced() &&
        policies->Synced() && namespaces->Synced() && jobs->Synced())
      routes.SetReady(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // Unready first, so the API server stops picking this replica, then drain what is in flight.
  routes.SetReady(false);
  LogLine(LogLevel::kInfo) << "stopping: unready, serving " << shutdown_delay.count()
            << " s more, then draining for at most " << shutdown_grace.count() << " s";
  std::this_thread::sleep_for(shutdown_delay);
  const bool drained = server.Drain(shutdown_grace);
  LogLine(LogLevel::kInfo) << (drained ? "drained" : "grace period over, connections dropped")
;
  if (probes) probes->Stop();
  for (auto* i : {&nodes, &graintunings, &policies, &namespaces, &jobs})
    if (*i) (*i)->Stop();
  return 0;
}
