// What graintune-webhook's planner reads, wired from its configuration (WebhookConfig):
//  - with API access (--kubeconfig, in-cluster, $KUBECONFIG or ~/.kube/config): host shapes
//    from a watched cache of TPU Nodes, mounted MaxText YAML from ConfigMaps read by name when
//    a job mounts one (a small cache, no watch), history from GrainTunings, policies from
//    GrainTunePolicies and Namespaces, and the tuned Jobs (pod retries count as attempts);
//  - --standalone, or no configuration found: the machine-type table, no history, and the
//    policies of --policy-file (else the built-in default).
// With --cert-secret it also makes sure the serving certificate exists before serving.
//
// The informers are not started here: informers() hands them to the server's lifecycle, which
// starts them and reports ready once they have synced. Errors are values with the exit status
// the main should end with (1: the API or the certificate failed; 2: a flag that does not fit).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "webhook/webhook_flags.h"
#include "webhook/worker_count_planner.h"
#include "workload/cluster_sources.h"
#include "workload/in_memory_sources.h"

namespace graintune::webhook {

struct StartFailure {
  int exit_status = 1;
  std::string message;
  Status ToStatus() const { return Status::Error(message); }
};

class WebhookSources {
 public:
  static Result<std::unique_ptr<WebhookSources>, StartFailure> Connect(const WebhookConfig& config);

  PlannerSources planner();
  // The caches to start and wait for; empty without API access.
  const std::vector<std::shared_ptr<kube::Informer>>& informers() const { return informers_; }
  // The client that renews the serving certificate; null unless --cert-secret.
  std::shared_ptr<kube::Client> certificate_client() const { return certificate_client_; }

 private:
  WebhookSources() = default;
  // The cluster's sources on `client` (and a short-request client for ConfigMaps).
  std::optional<StartFailure> ConnectCluster(const kube::ClientConfig& config,
                                             std::shared_ptr<kube::Client> client);
  std::optional<StartFailure> LoadPolicyFile(const std::string& path);

  std::vector<std::shared_ptr<kube::Informer>> informers_;
  std::shared_ptr<kube::Client> certificate_client_;
  workload::MachineTypeTableShapes table_shapes_;
  workload::InMemoryHistory no_history_;
  workload::InMemoryConfigMaps no_configmaps_;
  workload::FixedPolicy default_policy_;
  std::optional<workload::StaticPolicies> file_policies_;
  std::unique_ptr<workload::NodeShapeSource> cluster_shapes_;
  std::unique_ptr<workload::ConfigMapSource> cluster_configmaps_;
  std::unique_ptr<workload::HistorySource> cluster_history_;
  std::unique_ptr<workload::PolicySource> cluster_policies_;
  std::unique_ptr<workload::JobStatusSource> cluster_jobs_;
};

// Ensures the serving certificate (--cert-secret), retrying for about a minute: serving needs
// the pair, so on failure the main exits and the pod restarts.
Status EnsureServingCertificateAtStart(kube::Client& client, const ServingCertificateOptions& options);

}  // namespace graintune::webhook
