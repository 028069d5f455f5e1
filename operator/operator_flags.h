// graintune-operator's command line: its flags, declared once (OperatorCommand(): `--help` shows
// them with their defaults), and what they configure (OperatorConfig).
//
// Errors: OperatorConfigFromFlags answers a usage error naming the flag (a value out of range, a
// malformed duration or leader-election timing); the main exits 2 with it. Nothing here does I/O:
// the lease namespace and identity left empty are filled in by the main (the kubeconfig's
// namespace; host name and pid).
#pragma once

#include <string>

#include "base/status.h"
#include "kube/leader_election.h"
#include "operator/tuning_controller.h"
#include "server/flags.h"
#include "server/https_server.h"

namespace graintune::op {

const server::ServerCommand& OperatorCommand();

struct OperatorConfig {
  std::string kubeconfig;
  bool leader_elect = true;
  kube::LeaderElectionConfig lease;  // lease_namespace and identity may be empty (see above)
  ControllerOptions controller;      // without its Prometheus client
  std::string prometheus_url;        // empty: trials from the exporters' /steps
  server::HttpsServerOptions http;   // /healthz, /readyz, /metrics
};

Result<OperatorConfig> OperatorConfigFromFlags(const server::Flags& flags);

}  // namespace graintune::op
