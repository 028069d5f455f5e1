#include "webhook/webhook_flags.h"

#include <gtest/gtest.h>

namespace graintune::webhook {
namespace {

Result<WebhookConfig> From(std::vector<std::string> args) {
  Result<server::Flags> flags = server::Flags::ParseDeclared(args, WebhookCommand().flags);
  if (!flags.ok()) return flags.status();
  return WebhookConfigFromFlags(*flags);
}

const std::vector<std::string> kPair = {"--tls-cert-file", "c.pem", "--tls-key-file", "k.pem"};

std::vector<std::string> WithPair(std::vector<std::string> args) {
  args.insert(args.end(), kPair.begin(), kPair.end());
  return args;
}

TEST(WebhookFlagsTest, AbsentFlagsTakeTheirDeclaredDefaults) {
  Result<WebhookConfig> c = From(kPair);
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->https.bind_address, "0.0.0.0");
  EXPECT_EQ(c->https.port, 8443);
  EXPECT_EQ(c->https.idle_timeout_seconds, 120);  // above the API server's 90 s
  EXPECT_EQ(c->https.max_connections, server::HttpsServerOptions{}.max_connections);
  EXPECT_EQ(c->https.max_idle_per_source, server::HttpsServerOptions{}.max_idle_per_source);
  EXPECT_EQ(c->https.max_inflight_body_bytes, server::HttpsServerOptions{}.max_inflight_body_bytes);
  EXPECT_EQ(c->health_port, 8081);
  EXPECT_EQ(c->shutdown_delay, std::chrono::seconds(5));
  EXPECT_EQ(c->shutdown_grace, std::chrono::seconds(20));
  EXPECT_EQ(c->admit.limits.max_sites, WorkLimits{}.max_sites);
  EXPECT_TRUE(c->admit.exporter.has_value());
  EXPECT_FALSE(c->self_signed);
  EXPECT_EQ(c->https.cert_file, "c.pem");
}

TEST(WebhookFlagsTest, GivenFlagsReachTheirFields) {
  Result<WebhookConfig> c = From(WithPair({"--port=9443", "--idle-timeout", "30s", "--max-request-ms", "250",
                                           "--exclude-namespace", "a", "--exclude-namespace", "b",
                                           "--no-exporter", "--health-port", "0", "--standalone",
                                           "--max-idle-per-source=7"}));
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->https.port, 9443);
  EXPECT_EQ(c->https.idle_timeout_seconds, 30);
  EXPECT_EQ(c->https.max_idle_per_source, 7);
  EXPECT_EQ(c->admit.limits.max_time, std::chrono::milliseconds(250));
  EXPECT_TRUE(c->admit.excluded_namespaces.count("a") && c->admit.excluded_namespaces.count("b"));
  EXPECT_TRUE(c->admit.excluded_namespaces.count("kube-system"));
  EXPECT_FALSE(c->admit.exporter.has_value());
  EXPECT_EQ(c->health_port, 0);
  EXPECT_TRUE(c->standalone);
}

TEST(WebhookFlagsTest, UsageErrorsNameTheFlag) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {WithPair({"--max-connections", "0"}), "--max-connections"},
           {WithPair({"--max-idle-per-source", "0"}), "--max-idle-per-source"},
           {WithPair({"--header-timeout", "0"}), "--header-timeout must be in [1s, 1h]"},
           {WithPair({"--max-inflight-body-mib", "1"}), "--max-inflight-body-mib"},
           {WithPair({"--exporter-memory-limit", "1Mi"}), "--exporter-memory-limit"},
           {{}, "--tls-cert-file and --tls-key-file (or --cert-secret) are required"},
           {{"--cert-secret", "ns-only"}, "--cert-secret wants NAMESPACE/NAME"},
           {{"--cert-secret", "ns/s"}, "--cert-secret needs --cert-dir and --service-dns-name"},
           {{"--cert-secret", "ns/s", "--cert-dir", "/d", "--service-dns-name", "w.ns.svc", "--standalone"},
            "--cert-secret needs API access, not --standalone"}}) {
    Result<WebhookConfig> c = From(args);
    ASSERT_FALSE(c.ok()) << message;
    EXPECT_NE(c.error().find(message), std::string::npos) << c.error();
  }
}

TEST(WebhookFlagsTest, SelfManagedCertificatesServeTheirOwnPair) {
  Result<WebhookConfig> c = From({"--cert-secret", "graintune-system/webhook-tls", "--cert-dir", "/certs",
                                  "--service-dns-name", "a.svc", "--service-dns-name", "a.svc.cluster.local",
                                  "--webhook-configuration", "graintune"});
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_TRUE(c->self_signed);
  EXPECT_EQ(c->self_signed->secret_namespace, "graintune-system");
  EXPECT_EQ(c->self_signed->secret_name, "webhook-tls");
  EXPECT_EQ(c->self_signed->dns_names.size(), 2u);
  EXPECT_EQ(c->https.cert_file, "/certs/tls.crt");
  EXPECT_EQ(c->self_signed->key_file, "/certs/tls.key");
}

TEST(WebhookFlagsTest, TheUsageListsEveryFlagWithItsDefault) {
  const std::string usage = server::UsageText(WebhookCommand());
  EXPECT_EQ(usage.find("graintune-webhook: graintune's mutating admission webhook.\n\nusage:\n"
                       "  graintune-webhook --tls-cert-file F --tls-key-file F"),
            0u)
      << usage;
  for (const server::FlagSpec& f : WebhookCommand().flags)
    EXPECT_NE(usage.find("\n  --" + f.name), std::string::npos) << f.name;
  EXPECT_NE(usage.find("(default: 120s)"), std::string::npos);
}

}  // namespace
}  // namespace graintune::webhook
