#include "webhook/webhook_sources.h"

#include <thread>

#include "base/backoff.h"
#include "base/log.h"
#include "kube/config.h"
#include "workload/configmap_fetcher.h"
#include "workload/graintune_objects.h"
#include "workload/workload_annotations.h"
#include "workload/yaml_json.h"

namespace graintune::webhook {

Result<std::unique_ptr<WebhookSources>, StartFailure> WebhookSources::Connect(const WebhookConfig& config) {
  std::unique_ptr<WebhookSources> sources(new WebhookSources());
  if (!config.standalone) {
    Result<kube::ClientConfig> api = kube::LoadDefaultConfig(config.kubeconfig);
    if (!api.ok() && !config.kubeconfig.empty()) return StartFailure{1, api.error()};
    if (!api.ok()) {
      LogLine(LogLevel::kWarning) << "no API access (" << api.error()
                                  << "); running standalone on the machine-type table";
    } else {
      auto client = kube::Client::FromConfig(*api);
      if (!client.ok()) return StartFailure{1, client.error().ToString()};
      if (config.self_signed) {
        if (Status s = EnsureServingCertificateAtStart(**client, *config.self_signed); !s.ok())
          return StartFailure{1, s.message()};
        sources->certificate_client_ = *client;
      }
      if (std::optional<StartFailure> f = sources->ConnectCluster(*api, *client)) return *f;
    }
  }
  if (!config.policy_file.empty()) {
    if (!sources->informers_.empty())
      return StartFailure{2, "--policy-file is for --standalone; in a cluster policies are "
                             "GrainTunePolicy objects"};
    if (std::optional<StartFailure> f = sources->LoadPolicyFile(config.policy_file)) return *f;
  }
  return sources;
}

std::optional<StartFailure> WebhookSources::ConnectCluster(const kube::ClientConfig& config,
                                                           std::shared_ptr<kube::Client> client) {
  // Only what a decision reads is cached: TPU Nodes (their labels and allocatable only),
  // graintune's objects, Namespaces (for policy selectors) and the Jobs graintune tuned (pod
  // retries count as attempts). The few ConfigMaps a tuned job mounts are read by name when
  // needed, never watched.
  kube::ClientOptions short_requests;
  short_requests.request_timeout = std::chrono::milliseconds(750);
  short_requests.max_response_bytes = 2u << 20;  // a ConfigMap is at most 1 MiB
  auto configmap_client = kube::Client::FromConfig(config, short_requests);
  if (!configmap_client.ok()) return StartFailure{1, configmap_client.error().ToString()};
  workload::TpuNodeCache nodes = workload::MakeTpuNodeCache(client);
  auto graintunings = std::make_shared<kube::Informer>(client, kube::resources::kGrainTunings);
  auto policies = std::make_shared<kube::Informer>(client, kube::resources::kGrainTunePolicies);
  auto namespaces = std::make_shared<kube::Informer>(client, kube::resources::kNamespaces);
  auto jobs = std::make_shared<kube::Informer>(
      client, kube::resources::kJobs,
      kube::InformerOptions{.label_selector = std::string(workload::kManagedLabel) + "=true",
                            .transform = kube::DropManagedFields});
  informers_ = {nodes.informer, graintunings, policies, namespaces, jobs};
  cluster_jobs_ = std::make_unique<workload::JobCache>(jobs);
  cluster_shapes_ = std::make_unique<workload::NodeCacheShapes>(nodes);
  cluster_configmaps_ =
      std::make_unique<workload::ConfigMapFetcher>(workload::FetchConfigMapData(*configmap_client));
  cluster_history_ = std::make_unique<workload::GrainTuningHistory>(graintunings);
  cluster_policies_ = std::make_unique<workload::PolicyCache>(policies, namespaces);
  return std::nullopt;
}

std::optional<StartFailure> WebhookSources::LoadPolicyFile(const std::string& path) {
  Result<std::string> text = kube::ReadFileText(path);
  Result<std::vector<nlohmann::json>> docs =
      text.ok() ? workload::ParseYamlDocuments(*text) : Result<std::vector<nlohmann::json>>(text.status());
  Result<workload::StaticPolicies> loaded =
      docs.ok() ? workload::StaticPolicies::FromObjects(*docs) : Result<workload::StaticPolicies>(docs.status());
  if (!loaded.ok()) return StartFailure{2, "--policy-file " + path + ": " + loaded.error()};
  file_policies_ = std::move(loaded).value();
  return std::nullopt;
}

PlannerSources WebhookSources::planner() {
  workload::PolicySource& policies =
      cluster_policies_ ? *cluster_policies_
      : file_policies_  ? static_cast<workload::PolicySource&>(*file_policies_)
                        : static_cast<workload::PolicySource&>(default_policy_);
  return PlannerSources{
      cluster_shapes_ ? *cluster_shapes_ : static_cast<workload::NodeShapeSource&>(table_shapes_),
      cluster_history_ ? *cluster_history_ : static_cast<workload::HistorySource&>(no_history_),
      cluster_configmaps_ ? *cluster_configmaps_ : static_cast<workload::ConfigMapSource&>(no_configmaps_),
      policies, cluster_jobs_.get()};
}

Status EnsureServingCertificateAtStart(kube::Client& client, const ServingCertificateOptions& options) {
  Backoff backoff(std::chrono::milliseconds(500), std::chrono::seconds(8));
  Result<bool> ensured = Status::Error("not tried");
  for (int i = 0; i < 12 && !ensured.ok(); ++i) {
    ensured = EnsureServingCertificate(client, options);
    if (!ensured.ok()) {
      LogLine(LogLevel::kWarning) << "serving certificate: " << ensured.error();
      std::this_thread::sleep_for(backoff.Next());
    }
  }
  return ensured.ok() ? Status::Ok() : ensured.status();
}

}  // namespace graintune::webhook
