// The webhook's self-managed certificates against the real API server: issued once into a
// Secret, shared by replicas, trusted through the webhook configuration's caBundle, re-issued
// when close to expiry, owned by the webhook configuration so it goes with it.
#include "webhook/serving_certificates.h"

#include <gtest/gtest.h>

#include "kube/base64.h"
#include "kube/config.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/wait_for.h"
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
  // Owned by the configuration, whose deletion (helm uninstall) takes it along.
  auto owner_cfg = c->Get(kube::resources::kMutatingWebhookConfigurations, "", "gt-certs");
  ASSERT_TRUE(owner_cfg.ok());
  ASSERT_EQ((*secret)["metadata"]["ownerReferences"].size(), 1u) << secret->dump();
  const kube::Json& owner = (*secret)["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "MutatingWebhookConfiguration");
  EXPECT_EQ(owner["name"], "gt-certs");
  EXPECT_EQ(owner["uid"], (*owner_cfg)["metadata"]["uid"]);
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

  // A configuration that does not exist (yet: Helm may create it after the webhook starts) is
  // an error value, but the pair is issued and on disk so the server can serve.
  ServingCertificateOptions early = o;
  early.webhook_configuration = "gt-later";
  early.secret_name = "gt-tls-early";
  early.cert_file = cp->dir() + "/early.crt";
  early.key_file = cp->dir() + "/early.key";
  Result<bool> r = EnsureServingCertificate(*c, early);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("NotFound"), std::string::npos) << r.error();
  EXPECT_TRUE(kube::ReadFileText(early.cert_file).ok());
  auto unowned = c->Get(kube::resources::kSecrets, "graintune-system", "gt-tls-early");
  ASSERT_TRUE(unowned.ok());
  EXPECT_FALSE((*unowned)["metadata"].contains("ownerReferences"));
  // Once it exists, the next call trusts the same pair and adopts the Secret.
  ASSERT_TRUE(c->Create(kube::resources::kMutatingWebhookConfigurations, "",
                        testing::WebhookConfiguration("gt-later", "https://127.0.0.1:1", "stale"))
                  .ok());
  r = EnsureServingCertificate(*c, early);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(*r);
  auto adopted = c->Get(kube::resources::kSecrets, "graintune-system", "gt-tls-early");
  ASSERT_TRUE(adopted.ok());
  EXPECT_EQ((*adopted)["data"], (*unowned)["data"]);
  ASSERT_EQ((*adopted)["metadata"]["ownerReferences"].size(), 1u) << adopted->dump();
  EXPECT_EQ((*adopted)["metadata"]["ownerReferences"][0]["name"], "gt-later");
}

// With the garbage collector running (controller-manager): deleting the configuration, as
// `helm uninstall` does, deletes the Secret the webhook created at run time.
TEST(ServingCertificates, SecretGoesWithTheWebhookConfiguration) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  std::shared_ptr<kube::Client> c = cp->AdminClient();
  cp->Kubectl({"create", "namespace", "gt-uninstall"});
  ASSERT_TRUE(c->Create(kube::resources::kMutatingWebhookConfigurations, "",
                        testing::WebhookConfiguration("gt-gc", "https://127.0.0.1:1", "stale"))
                  .ok());
  ServingCertificateOptions o{.secret_namespace = "gt-uninstall", .secret_name = "gt-tls",
                              .webhook_configuration = "gt-gc",
                              .dns_names = {"gt-webhook.gt-uninstall.svc"},
                              .cert_file = cp->dir() + "/gc.crt", .key_file = cp->dir() + "/gc.key"};
  Result<bool> issued = EnsureServingCertificate(*c, o);
  ASSERT_TRUE(issued.ok()) << issued.error();
  ASSERT_TRUE(c->Get(kube::resources::kSecrets, "gt-uninstall", "gt-tls").ok());

  ASSERT_TRUE(c->Delete(kube::resources::kMutatingWebhookConfigurations, "", "gt-gc").ok());
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        auto s = c->Get(kube::resources::kSecrets, "gt-uninstall", "gt-tls");
        return !s.ok() && s.error().IsNotFound();
      },
      std::chrono::seconds(60)))
      << "the Secret outlived its webhook configuration";
}

}  // namespace
}  // namespace graintune::webhook
