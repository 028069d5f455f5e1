// X.509 material generated with OpenSSL: a CA, certificates it signs for servers and clients,
// and bare key pairs. Used by the webhook (its self-managed serving certificate), by the local
// control plane (API server serving cert, admin client cert, service-account signing keys) and
// by tests. Keys are P-256. Everything is PEM text; errors carry OpenSSL's reason; nothing throws.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::server {

struct KeyPair {
  std::string private_pem;  // PKCS#8
  std::string public_pem;   // SubjectPublicKeyInfo
};

struct CertificateAuthority {
  std::string cert_pem;
  std::string key_pem;
};

// What a signed certificate says about its holder.
struct CertificateRequest {
  std::string common_name;                 // a client's user name
  std::vector<std::string> organizations;  // a client's groups (e.g. system:masters)
  std::vector<std::string> dns_names;      // subjectAltName; a server needs at least one
  std::vector<std::string> ip_addresses;   //   DNS name or IP address
  bool server = false;                     // extendedKeyUsage serverAuth, else clientAuth
  int valid_days = 365;
};

struct SignedCertificate {
  std::string cert_pem;
  std::string key_pem;
};

Result<KeyPair> GenerateKeyPair();
Result<CertificateAuthority> GenerateCertificateAuthority(const std::string& common_name,
                                                          int valid_days);
Result<SignedCertificate> IssueCertificate(const CertificateAuthority& ca,
                                           const CertificateRequest& request);

// Seconds from now until the first certificate in `pem` expires (negative when it has).
Result<long> SecondsUntilExpiry(const std::string& cert_pem);

}  // namespace graintune::server
