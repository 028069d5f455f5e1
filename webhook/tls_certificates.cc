#include "webhook/tls_certificates.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <memory>

namespace graintune::webhook {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Status OpenSslError(const std::string& what) {
  char buf[256] = "unknown";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof(buf));
  return Status::Error(what + ": " + buf);
}

Key NewKey() { return Key(EVP_EC_gen("P-256")); }

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Cert NewCert(EVP_PKEY* key, const std::string& common_name, int valid_days) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * valid_days);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  return cert;
}

std::string Pem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string Pem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

Result<TlsMaterial> GenerateTlsMaterial(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses,
                                        int valid_days) {
  if (dns_names.empty() && ip_addresses.empty())
    return Status::Error("a serving certificate needs at least one DNS name or IP address");
  if (valid_days < 1 || valid_days > 3650) return Status::Error("valid_days must be in [1, 3650]");
  Key ca_key = NewKey(), key = NewKey();
  if (!ca_key || !key) return OpenSslError("generating P-256 keys");

  Cert ca = NewCert(ca_key.get(), "graintune-webhook-ca", valid_days);
  X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
  if (!AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(ca.get(), ca_key.get(), EVP_sha256()) == 0)
    return OpenSslError("signing the CA certificate");

  const std::string cn = dns_names.empty() ? ip_addresses.front() : dns_names.front();
  Cert cert = NewCert(key.get(), cn, valid_days);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  std::string san;
  for (const std::string& d : dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + d;
  for (const std::string& ip : ip_addresses) san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  if (!AddExtension(cert.get(), ca.get(), NID_subject_alt_name, san) ||
      !AddExtension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth") ||
      X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0)
    return OpenSslError("signing the serving certificate");

  return TlsMaterial{Pem(ca.get()), Pem(cert.get()), Pem(key.get())};
}

}  // namespace graintune::webhook
