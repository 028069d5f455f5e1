// Self-managed TLS material for the webhook: a CA and a serving certificate it signs, in PEM,
// generated with OpenSSL (P-256 keys). Used when cert-manager is not, by tests, and by the
// local demo. Errors carry OpenSSL's reason; nothing throws.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::server {

struct TlsMaterial {
  std::string ca_pem;    // the CA certificate (the webhook configuration's caBundle)
  std::string cert_pem;  // serving certificate, signed by the CA
  std::string key_pem;   // serving key
};

// `dns_names` and `ip_addresses` become the serving certificate's subjectAltName.
Result<TlsMaterial> GenerateTlsMaterial(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses,
                                        int valid_days);

}  // namespace graintune::server
