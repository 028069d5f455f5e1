// graintune-webhook: the mutating admission webhook. Parses flags and wires the parts.
//
//   graintune-webhook --tls-cert-file F --tls-key-file F [--bind-address A] [--port N]
//                     [--kubeconfig K | --standalone [--policy-file P.yaml]]
//                     [--exclude-namespace NS]...
//                     [--exporter-image IMG] [--exporter-port N] [--share-process-namespace]
//                     [--no-exporter]
//                     [--cert-secret NS/NAME --cert-dir DIR --service-dns-name DNS...
//                      --webhook-configuration NAME]   (self-managed certificates)
// With API access (--kubeconfig, in-cluster, $KUBECONFIG or ~/.kube/config) host shapes come
// from the watched Node cache, mounted MaxText YAML from the ConfigMap cache, history from
// GrainTunings and policies from GrainTunePolicies; /readyz waits for every cache. --standalone (or no reachable configuration) uses the machine-type table
// alone.
#include <csignal>
#include <iostream>
#include <thread>

#include "kube/config.h"
#include "kube/informer.h"
#include "webhook/admission.h"
#include "kube/backoff.h"
#include "webhook/cluster_sources.h"
#include "webhook/graintune_objects.h"
#include "webhook/serving_certificates.h"
#include "webhook/yaml_json.h"
#include "webhook/fake_sources.h"
#include "webhook/command_line.h"
#include "webhook/https_server.h"
#include "webhook/webhook_routes.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int IntFlag(const std::string& flag, const std::string& text, int lo, int hi) {
  return graintune::webhook::IntFlagOrExit("graintune-webhook", flag, text, lo, hi);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace graintune::webhook;
  HttpsServerOptions options;
  options.port = 8443;
  options.bind_address = "0.0.0.0";
  AdmitterOptions admit;
  admit.exporter = ExporterInjection{};
  std::string kubeconfig;
  bool standalone = false;
  ServingCertificateOptions self_signed;
  std::string policy_file;
  std::string cert_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "graintune-webhook: " << flag << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--tls-cert-file") options.cert_file = value();
    else if (flag == "--tls-key-file") options.key_file = value();
    else if (flag == "--bind-address") options.bind_address = value();
    else if (flag == "--port") options.port = static_cast<unsigned short>(IntFlag(flag, value(), 1, 65535));
    else if (flag == "--threads") options.threads = IntFlag(flag, value(), 1, 64);
    else if (flag == "--exclude-namespace") admit.excluded_namespaces.insert(value());
    else if (flag == "--kubeconfig") kubeconfig = value();
    else if (flag == "--standalone") standalone = true;
    else if (flag == "--exporter-image") admit.exporter.emplace().image = value();
    else if (flag == "--exporter-port") admit.exporter.emplace().port = IntFlag(flag, value(), 1, 65535);
    else if (flag == "--share-process-namespace") admit.exporter.emplace().share_process_namespace = true;
    else if (flag == "--no-exporter") admit.exporter.reset();
    else if (flag == "--cert-secret") {
      const std::string v = value();
      const size_t slash = v.find('/');
      if (slash == std::string::npos) {
        std::cerr << "graintune-webhook: --cert-secret wants NAMESPACE/NAME\n";
        return 2;
      }
      self_signed.secret_namespace = v.substr(0, slash);
      self_signed.secret_name = v.substr(slash + 1);
    }
    else if (flag == "--webhook-configuration") self_signed.webhook_configuration = value();
    else if (flag == "--service-dns-name") self_signed.dns_names.push_back(value());
    else if (flag == "--cert-dir") cert_dir = value();
    else if (flag == "--policy-file") policy_file = value();
    else {
      std::cerr << "graintune-webhook: unknown flag " << flag << "\n";
      return 2;
    }
  }
  const bool manage_certs = !self_signed.secret_name.empty();
  if (manage_certs) {
    if (cert_dir.empty() || self_signed.dns_names.empty()) {
      std::cerr << "graintune-webhook: --cert-secret needs --cert-dir and --service-dns-name\n";
      return 2;
    }
    options.cert_file = self_signed.cert_file = cert_dir + "/tls.crt";
    options.key_file = self_signed.key_file = cert_dir + "/tls.key";
  }
  if (options.cert_file.empty() || options.key_file.empty()) {
    std::cerr << "graintune-webhook: --tls-cert-file and --tls-key-file (or --cert-secret) are "
                 "required\n";
    return 2;
  }
  // Sources: the API server's caches when reachable, else the built-in table.
  std::shared_ptr<graintune::kube::Informer> nodes, configmaps, graintunings, policies, namespaces, jobs;
  std::shared_ptr<graintune::kube::Client> cert_client;
  if (manage_certs && standalone) {
    std::cerr << "graintune-webhook: --cert-secret needs API access, not --standalone\n";
    return 2;
  }
  if (!standalone) {
    graintune::Result<graintune::kube::ClientConfig> config =
        graintune::kube::LoadDefaultConfig(kubeconfig);
    if (!config.ok() && !kubeconfig.empty()) {
      std::cerr << "graintune-webhook: " << config.error() << "\n";
      return 1;
    }
    if (!config.ok()) {
      std::cerr << "graintune-webhook: no API access (" << config.error()
                << "); running standalone on the machine-type table\n";
    } else {
      auto client = graintune::kube::Client::FromConfig(*config);
      if (!client.ok()) {
        std::cerr << "graintune-webhook: " << client.error().ToString() << "\n";
        return 1;
      }
      if (manage_certs) {
        // Serving needs the pair: retry for a minute, then give up (the pod restarts).
        graintune::kube::Backoff backoff(std::chrono::milliseconds(500), std::chrono::seconds(8));
        graintune::Result<bool> ensured = graintune::Status::Error("not tried");
        for (int i = 0; i < 12 && !ensured.ok(); ++i) {
          ensured = EnsureServingCertificate(**client, self_signed);
          if (!ensured.ok()) {
            std::cerr << "graintune-webhook: serving certificate: " << ensured.error() << "\n";
            std::this_thread::sleep_for(backoff.Next());
          }
        }
        if (!ensured.ok()) return 1;
        cert_client = *client;
      }
      nodes = std::make_shared<graintune::kube::Informer>(*client, graintune::kube::resources::kNodes);
      configmaps = std::make_shared<graintune::kube::Informer>(
          *client, graintune::kube::resources::kConfigMaps);
      graintunings = std::make_shared<graintune::kube::Informer>(
          *client, graintune::kube::resources::kGrainTunings);
      policies = std::make_shared<graintune::kube::Informer>(
          *client, graintune::kube::resources::kGrainTunePolicies);
      namespaces = std::make_shared<graintune::kube::Informer>(
          *client, graintune::kube::resources::kNamespaces);
      jobs = std::make_shared<graintune::kube::Informer>(*client, graintune::kube::resources::kJobs);
      for (auto* i : {&nodes, &configmaps, &graintunings, &policies, &namespaces, &jobs}) (*i)->Start();
    }
  }
  MachineTypeTableShapes table_shapes;
  std::unique_ptr<NodeShapeSource> cluster_shapes;
  std::unique_ptr<ConfigMapSource> cluster_configmaps;
  std::unique_ptr<HistorySource> cluster_history;
  std::unique_ptr<PolicySource> cluster_policies;
  std::unique_ptr<JobStatusSource> cluster_jobs;
  if (nodes) {
    cluster_jobs = std::make_unique<JobCache>(jobs);
    cluster_shapes = std::make_unique<NodeCacheShapes>(nodes);
    cluster_configmaps = std::make_unique<ConfigMapCache>(configmaps);
    cluster_history = std::make_unique<GrainTuningHistory>(graintunings);
    cluster_policies = std::make_unique<PolicyCache>(policies, namespaces);
  }
  InMemoryHistory no_history;
  InMemoryConfigMaps no_configmaps;
  FixedPolicy default_policy;
  std::optional<StaticPolicies> file_policies;
  if (!policy_file.empty()) {
    if (!standalone && nodes) {
      std::cerr << "graintune-webhook: --policy-file is for --standalone; in a cluster policies are "
                   "GrainTunePolicy objects\n";
      return 2;
    }
    graintune::Result<std::string> text = graintune::kube::ReadFileText(policy_file);
    graintune::Result<std::vector<nlohmann::json>> docs =
        text.ok() ? ParseYamlDocuments(*text)
                  : graintune::Result<std::vector<nlohmann::json>>(text.status());
    graintune::Result<StaticPolicies> loaded =
        docs.ok() ? StaticPolicies::FromObjects(*docs) : graintune::Result<StaticPolicies>(docs.status());
    if (!loaded.ok()) {
      std::cerr << "graintune-webhook: --policy-file " << policy_file << ": " << loaded.error() << "\n";
      return 2;
    }
    file_policies = std::move(loaded).value();
  }
  NodeShapeSource& shapes = cluster_shapes ? *cluster_shapes : table_shapes;
  ConfigMapSource& configmap_source =
      cluster_configmaps ? *cluster_configmaps : static_cast<ConfigMapSource&>(no_configmaps);
  HistorySource& history = cluster_history ? *cluster_history : static_cast<HistorySource&>(no_history);
  PolicySource& policy_source =
      cluster_policies ? *cluster_policies
      : file_policies  ? static_cast<PolicySource&>(*file_policies)
                       : static_cast<PolicySource&>(default_policy);
  Admitter admitter(
      PlannerSources{shapes, history, configmap_source, policy_source, cluster_jobs.get()}, admit);
  WebhookMetrics metrics;
  WebhookRoutes routes(admitter, metrics);
  // Not ready until the caches are: the API server then sends requests to a replica that is.
  routes.SetReady(!nodes);
  HttpsServer server(options, [&](const HttpRequest& r) { return routes.Handle(r); });
  if (graintune::Status s = server.Start(); !s.ok()) {
    std::cerr << "graintune-webhook: " << s.message() << "\n";
    return 1;
  }
  std::cerr << "graintune-webhook: serving on " << options.bind_address << ":" << server.port() << "\n";
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  auto next_cert_check = std::chrono::steady_clock::now() + std::chrono::hours(12);
  while (!g_stop) {
    if (cert_client && std::chrono::steady_clock::now() > next_cert_check) {
      // Re-issue ahead of expiry; the server picks the new files up by itself.
      graintune::Result<bool> r = EnsureServingCertificate(*cert_client, self_signed);
      if (!r.ok()) std::cerr << "graintune-webhook: certificate renewal: " << r.error() << "\n";
      next_cert_check = std::chrono::steady_clock::now() +
                        (r.ok() ? std::chrono::hours(12) : std::chrono::hours(1));
    }
    if (nodes && nodes->Synced() && configmaps->Synced() && graintunings->Synced() &&
        policies->Synced() && namespaces->Synced() && jobs->Synced())
      routes.SetReady(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (auto* i : {&nodes, &configmaps, &graintunings, &policies, &namespaces, &jobs})
    if (*i) (*i)->Stop();
  server.Stop();
  return 0;
}
