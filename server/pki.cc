#include "server/pki.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <memory>

namespace graintune::server {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Status OpenSslError(const std::string& what) {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return Status::Error(what + ": " + buf);
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::string PrivatePem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

std::string CertPem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

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

void AddName(X509_NAME* name, const char* field, const std::string& value) {
  X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
}

Cert NewCert(EVP_PKEY* key, const CertificateRequest& req) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  // Back-dated five minutes so a peer with a slightly slow clock accepts it at once.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * req.valid_days);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const std::string& o : req.organizations) AddName(name, "O", o);
  AddName(name, "CN", req.common_name);
  return cert;
}

Result<Key> ReadKey(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return OpenSslError("reading the CA key");
  return key;
}

Result<Cert> ReadCert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return OpenSslError("reading the CA certificate");
  return cert;
}

Status CheckDays(int days) {
  if (days < 1 || days > 3650) return Status::Error("valid_days must be in [1, 3650]");
  return Status::Ok();
}

}  // namespace

Result<KeyPair> GenerateKeyPair() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("generating a P-256 key");
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), key.get());
  return KeyPair{PrivatePem(key.get()), BioText(bio.get())};
}

Result<CertificateAuthority> GenerateCertificateAuthority(const std::string& common_name,
                                                          int valid_days) {
  if (Status s = CheckDays(valid_days); !s.ok()) return s;
  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("generating a P-256 key");
  CertificateRequest req;
  req.common_name = common_name;
  req.valid_days = valid_days;
  Cert ca = NewCert(key.get(), req);
  X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
  if (!AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(ca.get(), key.get(), EVP_sha256()) == 0)
    return OpenSslError("signing the CA certificate");
  return CertificateAuthority{CertPem(ca.get()), PrivatePem(key.get())};
}

Result<SignedCertificate> IssueCertificate(const CertificateAuthority& ca,
                                           const CertificateRequest& req) {
  if (Status s = CheckDays(req.valid_days); !s.ok()) return s;
  if (req.server && req.dns_names.empty() && req.ip_addresses.empty())
    return Status::Error("a serving certificate needs at least one DNS name or IP address");
  if (req.common_name.empty()) return Status::Error("a certificate needs a common name");
  Result<Key> ca_key = ReadKey(ca.key_pem);
  if (!ca_key.ok()) return ca_key.status();
  Result<Cert> ca_cert = ReadCert(ca.cert_pem);
  if (!ca_cert.ok()) return ca_cert.status();

  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("generating a P-256 key");
  Cert cert = NewCert(key.get(), req);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert->get()));
  std::string san;
  for (const std::string& d : req.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const std::string& ip : req.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  if ((!san.empty() && !AddExtension(cert.get(), ca_cert->get(), NID_subject_alt_name, san)) ||
      !AddExtension(cert.get(), ca_cert->get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(cert.get(), ca_cert->get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment") ||
      !AddExtension(cert.get(), ca_cert->get(), NID_ext_key_usage,
                    req.server ? "serverAuth" : "clientAuth") ||
      X509_sign(cert.get(), ca_key->get(), EVP_sha256()) == 0)
    return OpenSslError("signing the certificate for '" + req.common_name + "'");
  return SignedCertificate{CertPem(cert.get()), PrivatePem(key.get())};
}

Result<long> SecondsUntilExpiry(const std::string& cert_pem) {
  Result<Cert> cert = ReadCert(cert_pem);
  if (!cert.ok()) return cert.status();
  int days = 0, seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, nullptr, X509_get0_notAfter(cert->get())) != 1)
    return OpenSslError("reading the certificate's expiry");
  return static_cast<long>(days) * 86400L + seconds;
}

}  // namespace graintune::server
