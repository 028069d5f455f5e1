// Self-managed serving certificates for the webhook when cert-manager is not used: a CA and a
// serving certificate kept in a Secret of the release namespace (so every replica serves the
// same pair), written to files the HTTPS server reloads, and the CA put into the
// MutatingWebhookConfiguration's caBundle. Re-issued when less than `renew_before` is left.
// The Secret is owned by that configuration (an ownerReference), so the garbage collector
// removes it when the configuration goes (`helm uninstall`); a Secret written before the
// configuration existed is adopted by a later call.
//
// Two replicas starting together may both generate: the first Secret created wins, the other
// reads it back. Errors are values; the caller retries later (the server keeps the old pair).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "kube/client.h"

namespace graintune::webhook {

struct ServingCertificateOptions {
  std::string secret_namespace;
  std::string secret_name;
  std::string webhook_configuration;   // MutatingWebhookConfiguration to put the CA into
  std::vector<std::string> dns_names;  // e.g. graintune-webhook.graintune-system.svc
  std::string cert_file, key_file;     // where the server reads them
  int valid_days = 365;
  std::chrono::hours renew_before{24 * 30};
};

// Ensures a valid pair exists, is on disk and is trusted by the webhook configuration.
// Returns true when it issued a new pair. A configuration that does not exist (yet) is an
// error returned after the pair is on disk, so the server can serve meanwhile.
Result<bool> EnsureServingCertificate(kube::Client& client, const ServingCertificateOptions& options);

}  // namespace graintune::webhook
