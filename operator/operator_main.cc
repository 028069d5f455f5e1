// graintune-operator: keeps a GrainTuning per tuning key, records each attempt's trial from the
// exporters of its pods, and sets the value the webhook gives the next attempt. Two replicas
// elect a leader through a Lease; only the leader reconciles, both serve health endpoints.
//
// Flags: OperatorCommand() (operator/operator_flags.h; also `graintune-operator --help`).
#include <unistd.h>

#include <atomic>

#include "base/log.h"
#include "kube/config.h"
#include "kube/leader_election.h"
#include "operator/operator_endpoints.h"
#include "operator/operator_flags.h"
#include "operator/tuning_controller.h"
#include "server/flags.h"
#include "server/https_server.h"
#include "server/lifecycle.h"

namespace {

using namespace graintune;

// The Lease's namespace (default: the configuration's) and this replica's identity (default:
// host name and pid).
void FillInLease(kube::LeaderElectionConfig& lease, const kube::ClientConfig& api) {
  if (lease.lease_namespace.empty()) lease.lease_namespace = api.default_namespace;
  if (!lease.identity.empty()) return;
  char host[256] = "graintune-operator";
  ::gethostname(host, sizeof(host) - 1);
  lease.identity = std::string(host) + "-" + std::to_string(::getpid());
}

// Leads while the Lease is ours; a replica that starts leading queues every key once (events it
// may have let pass while it followed).
std::function<void(std::stop_token)> LeaderElection(std::shared_ptr<kube::Client> client,
                                                    kube::LeaderElectionConfig lease,
                                                    std::atomic<bool>& leading, std::atomic<bool>& enqueue_all) {
  return [client, lease, &leading, &enqueue_all](std::stop_token stop) {
    kube::LeaderElector elector(client, lease,
                                {.on_started_leading = [&] {
                                   enqueue_all = true;
                                   leading = true;
                                   LogLine(LogLevel::kInfo) << lease.identity << " is leading";
                                 },
                                 .on_stopped_leading = [&] {
                                   leading = false;
                                   LogLine(LogLevel::kInfo) << lease.identity << " stopped leading";
                                 }});
    elector.Run(stop);
  };
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServerCommand& command = op::OperatorCommand();
  const server::Flags flags = server::ParseServerFlags(command, argc, argv);
  op::OperatorConfig config = server::ExitOnUsageError(command.program, op::OperatorConfigFromFlags(flags));
  Result<kube::ClientConfig> api = kube::LoadDefaultConfig(config.kubeconfig);
  if (!api.ok()) {
    LogLine(LogLevel::kError) << api.error();
    return 1;
  }
  FillInLease(config.lease, *api);
  auto client = kube::Client::FromConfig(*api);
  if (!client.ok()) {
    LogLine(LogLevel::kError) << client.error().ToString();
    return 1;
  }
  if (!config.prometheus_url.empty()) {
    auto prometheus = kube::Client::FromConfig({.server = config.prometheus_url, .allow_plain_http = true});
    if (!prometheus.ok()) server::ExitWithUsageError(command.program, "--prometheus-url: " + prometheus.error().ToString());
    config.controller.prometheus = *prometheus;
  }
  // The informers' events queue the tuning keys to reconcile.
  auto keys = std::make_shared<op::KeyEvents>(std::make_shared<op::WorkQueue>());
  op::ControllerCaches caches = op::ControllerCaches::ForClient(*client, *keys);
  auto recorder = std::make_shared<kube::EventRecorder>(*client, "graintune.dev/operator", config.lease.identity);
  op::TuningController controller(*client, caches, recorder, keys, config.controller);
  std::atomic<bool> leading{!config.leader_elect}, enqueue_all{true};
  op::OperatorEndpoints endpoints(controller, caches, leading);
  server::HttpsServer server(config.http, [&](const server::HttpRequest& r) { return endpoints.Handle(r); });
  if (Status s = server.Start(); !s.ok()) {
    LogLine(LogLevel::kError) << s.message();
    return 1;
  }
  LogLine(LogLevel::kInfo) << config.lease.identity << " serving health on " << config.http.bind_address
                           << ":" << server.port();
  server::Lifecycle lifecycle;
  lifecycle.AddServer(server);
  lifecycle.AddCache({[&] { caches.Start(); }, [&] { return caches.Synced(); }, [&] { caches.Stop(); }});
  if (config.leader_elect) lifecycle.AddWorker(LeaderElection(*client, config.lease, leading, enqueue_all));
  lifecycle.AddWorker([&](std::stop_token stop) {
    controller.Run(stop, [&] {
      if (!leading || !caches.Synced()) return false;
      if (enqueue_all.exchange(false)) controller.EnqueueAll();
      return true;
    });
  });
  lifecycle.Run({});
  return 0;
}
