// The webhook's self-managed certificates against the real API server: issued once into a
// Secret, shared by replicas, trusted through the webhook configuration's caBundle, re-issued
// when close to expiry.
#include "webhook/serving_certificates.h"

#include <gtest/gtest.h>

#include "kube/base64.h"
#include "kube/config.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::webhook {
namespace {

using testing::ControlPlaneKind;

TEST(ServingCertificates, IssuedOnceSharedAndTrustedThenRenewed) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<kube::Client> c = cp->AdminClient();
  cp->Kubectl({"create", "namespace", "graintune-system"});
  // A configuration with two webhooks and a stale CA.
  kube::Json config = testing::WebhookConfiguration("gt-certs", "https://127.0.0.1:1", "stale");
  config["webhooks"].push_back(config["webhooks"][0]);
  config["webhooks"][1]["name"] = "second.graintune.dev";
  ASSERT_TRUE(c->Create(kube::resources::kMutatingWebhookConfigurations, "", config).ok());

  ServingCertificateOptions o{.secret_namespace = "graintune-system", .secret_name = "gt-tls",
                              .webhook_configuration = "gt-certs",
                              .dns_names = {"gt-webhook.graintune-system.svc"},
                              .cert_file = cp->dir() + "/replica-a.crt",
                              .key_file = cp->dir() + "/replica-a.key"};
  Result<bool> first = EnsureServingCertificate(*c, o);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_TRUE(*first);
  // A second replica uses the same pair.
  ServingCertificateOptions b = o;
  b.cert_file = cp->dir() + "/replica-b.crt";
  b.key_file = cp->dir() + "/replica-b.key";
  Result<bool> second = EnsureServingCertificate(*c, b);
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_FALSE(*second);
  EXPECT_EQ(*kube::ReadFileText(o.cert_file), *kube::ReadFileText(b.cert_file));

  auto secret = c->Get(kube::resources::kSecrets, "graintune-system", "gt-tls");
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ((*secret)["type"], "kubernetes.io/tls");
  const std::string ca_b64 = (*secret)["data"]["ca.crt"];
  auto cfg = c->Get(kube::resources::kMutatingWebhookConfigurations, "", "gt-certs");
  ASSERT_TRUE(cfg.ok());
  for (const kube::Json& w : (*cfg)["webhooks"]) EXPECT_EQ(w["clientConfig"]["caBundle"], ca_b64);

  // Inside the renewal window: a new pair, and the bundle follows.
  ServingCertificateOptions soon = o;
  soon.renew_before = std::chrono::hours(24 * 400);
  Result<bool> renewed = EnsureServingCertificate(*c, soon);
  ASSERT_TRUE(renewed.ok()) << renewed.error();
  EXPECT_TRUE(*renewed);
  auto after = c->Get(kube::resources::kSecrets, "graintune-system", "gt-tls");
  EXPECT_NE((*after)["data"]["ca.crt"], ca_b64);
  cfg = c->Get(kube::resources::kMutatingWebhookConfigurations, "", "gt-certs");
  EXPECT_EQ((*cfg)["webhooks"][0]["clientConfig"]["caBundle"], (*after)["data"]["ca.crt"]);

  // A configuration that does not exist is an error value, not a crash.
  ServingCertificateOptions missing = o;
  missing.webhook_configuration = "absent";
  Result<bool> r = EnsureServingCertificate(*c, missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("NotFound"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace graintune::webhook
