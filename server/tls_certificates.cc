#include "server/tls_certificates.h"

#include "server/pki.h"

namespace graintune::server {

Result<TlsMaterial> GenerateTlsMaterial(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses,
                                        int valid_days) {
  Result<server::CertificateAuthority> ca =
      server::GenerateCertificateAuthority("graintune-webhook-ca", valid_days);
  if (!ca.ok()) return ca.status();
  server::CertificateRequest req;
  req.common_name = dns_names.empty() ? (ip_addresses.empty() ? "" : ip_addresses.front())
                                      : dns_names.front();
  req.dns_names = dns_names;
  req.ip_addresses = ip_addresses;
  req.server = true;
  req.valid_days = valid_days;
  Result<server::SignedCertificate> cert = server::IssueCertificate(*ca, req);
  if (!cert.ok()) return cert.status();
  return TlsMaterial{ca->cert_pem, cert->cert_pem, cert->key_pem};
}

}  // namespace graintune::server
