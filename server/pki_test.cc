#include "server/pki.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace graintune::server {
namespace {

X509* Read(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

std::string Subject(X509* cert) {
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

TEST(PkiTest, IssuedCertificatesVerifyAgainstTheirCa) {
  Result<CertificateAuthority> ca = GenerateCertificateAuthority("test-ca", 1);
  ASSERT_TRUE(ca.ok()) << ca.error();
  CertificateRequest admin{.common_name = "admin", .organizations = {"system:masters"}};
  Result<SignedCertificate> client = IssueCertificate(*ca, admin);
  ASSERT_TRUE(client.ok()) << client.error();

  X509* ca_cert = Read(ca->cert_pem);
  X509* leaf = Read(client->cert_pem);
  ASSERT_NE(ca_cert, nullptr);
  ASSERT_NE(leaf, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca_cert);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  EXPECT_EQ(X509_verify_cert(ctx), 1) << X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  // Kubernetes reads the user from CN and groups from O.
  EXPECT_EQ(Subject(leaf), "/O=system:masters/CN=admin");
  EXPECT_TRUE(X509_check_purpose(leaf, X509_PURPOSE_SSL_CLIENT, 0) == 1);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(leaf);
  X509_free(ca_cert);
}

TEST(PkiTest, ServingCertificateCarriesItsAddresses) {
  Result<CertificateAuthority> ca = GenerateCertificateAuthority("test-ca", 1);
  ASSERT_TRUE(ca.ok());
  Result<SignedCertificate> srv = IssueCertificate(
      *ca, {.common_name = "api", .dns_names = {"localhost"}, .ip_addresses = {"127.0.0.1"},
            .server = true});
  ASSERT_TRUE(srv.ok()) << srv.error();
  X509* leaf = Read(srv->cert_pem);
  EXPECT_EQ(X509_check_host(leaf, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf, "127.0.0.2", 0), 0);
  X509_free(leaf);
}

TEST(PkiTest, ExpiryIsReadBack) {
  Result<CertificateAuthority> ca = GenerateCertificateAuthority("test-ca", 10);
  ASSERT_TRUE(ca.ok());
  Result<long> left = SecondsUntilExpiry(ca->cert_pem);
  ASSERT_TRUE(left.ok());
  EXPECT_NEAR(static_cast<double>(*left), 10 * 86400.0, 120.0);
  EXPECT_FALSE(SecondsUntilExpiry("garbage").ok());
}

TEST(PkiTest, BadRequestsAreErrors) {
  Result<CertificateAuthority> ca = GenerateCertificateAuthority("test-ca", 1);
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(IssueCertificate(*ca, {.common_name = "s", .server = true}).ok());
  EXPECT_FALSE(IssueCertificate(*ca, {.common_name = "", .valid_days = 1}).ok());
  EXPECT_FALSE(IssueCertificate({"not pem", "not pem"}, {.common_name = "x"}).ok());
  EXPECT_FALSE(GenerateCertificateAuthority("ca", 0).ok());
  Result<KeyPair> kp = GenerateKeyPair();
  ASSERT_TRUE(kp.ok());
  EXPECT_NE(kp->public_pem.find("BEGIN PUBLIC KEY"), std::string::npos);
  EXPECT_NE(kp->private_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace graintune::server
