// graintune-webhook's command line: its flags, declared once (WebhookCommand(): `--help` shows
// them with their defaults), and what they configure (WebhookConfig).
//
// Errors: WebhookConfigFromFlags answers a usage error naming the flag (a value out of range, a
// flag that needs another, no serving certificate at all); the main exits 2 with it. Nothing
// here does I/O.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"
#include "server/flags.h"
#include "server/https_server.h"
#include "webhook/admission.h"
#include "webhook/serving_certificates.h"

namespace graintune::webhook {

const server::ServerCommand& WebhookCommand();

struct WebhookConfig {
  server::HttpsServerOptions https;  // the admission server (TLS)
  int health_port = 8081;            // /healthz, /readyz, /metrics over plain HTTP; 0: none
  std::chrono::seconds shutdown_delay{5};
  std::chrono::seconds shutdown_grace{20};
  AdmitterOptions admit;
  std::string kubeconfig;  // empty: in-cluster, $KUBECONFIG or ~/.kube/config
  bool standalone = false;
  std::string policy_file;  // with standalone
  // --cert-secret: the webhook issues and renews its own serving certificate.
  std::optional<ServingCertificateOptions> self_signed;
};

Result<WebhookConfig> WebhookConfigFromFlags(const server::Flags& flags);

// The probe server's options: plain HTTP on `port` at the admission server's address, one
// thread, small bodies and few connections (a probe or a Prometheus scrape at a time).
server::HttpsServerOptions ProbeServerOptions(const WebhookConfig& config);

}  // namespace graintune::webhook
