#include "bench/scale/noop_webhook.h"

#include "kube/base64.h"
#include "server/pki.h"
#include "tests/controlplane/child_process.h"

namespace graintune::bench {
namespace {

using kube::Json;

// The answer every webhook gives at least: the request's uid, allowed, no patch.
server::HttpResponse Allow(const server::HttpRequest& request) {
  const Json review = Json::parse(request.body, nullptr, false);
  std::string uid;
  if (review.is_object() && review.contains("request") && review["request"].is_object())
    uid = review["request"].value("uid", "");
  const Json answer = {{"apiVersion", "admission.k8s.io/v1"},
                       {"kind", "AdmissionReview"},
                       {"response", {{"uid", uid}, {"allowed", true}}}};
  return {200, "application/json", answer.dump()};
}

}  // namespace

Result<std::unique_ptr<NoopWebhook>> NoopWebhook::Start(testing::ControlPlane& cp, const std::string& work_dir,
                                                        const std::string& ns, int threads,
                                                        int timeout_seconds) {
  Result<server::CertificateAuthority> ca = server::GenerateCertificateAuthority("noop-webhook-ca", 2);
  if (!ca.ok()) return Status::Error("no-op webhook CA: " + ca.error());
  Result<server::SignedCertificate> cert =
      server::IssueCertificate(*ca, {.common_name = "noop-webhook", .ip_addresses = {"127.0.0.1"},
                                     .server = true, .valid_days = 2});
  if (!cert.ok()) return Status::Error("no-op webhook certificate: " + cert.error());
  const std::string cert_file = work_dir + "/noop-webhook.crt", key_file = work_dir + "/noop-webhook.key";
  if (Status s = testing::WriteFile(cert_file, cert->cert_pem); !s.ok()) return s;
  if (Status s = testing::WriteFile(key_file, cert->key_pem); !s.ok()) return s;

  std::unique_ptr<NoopWebhook> hook(new NoopWebhook(cp));
  hook->server_ = std::make_unique<server::HttpsServer>(
      server::HttpsServerOptions{.cert_file = cert_file, .key_file = key_file, .threads = threads},
      [answered = hook->answered_](const server::HttpRequest& request) {
        server::HttpResponse response = Allow(request);
        ++*answered;
        return response;
      });
  if (Status s = hook->server_->Start(); !s.ok()) return Status::Error("no-op webhook: " + s.message());
  const Json configuration = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "MutatingWebhookConfiguration"},
      {"metadata", {{"name", kConfigurationName}}},
      {"webhooks",
       {{{"name", kConfigurationName},
         {"admissionReviewVersions", {"v1"}},
         {"clientConfig", {{"url", "https://127.0.0.1:" + std::to_string(hook->server_->port()) + "/mutate"},
                           {"caBundle", kube::Base64Encode(ca->cert_pem)}}},
         {"rules", {{{"apiGroups", {""}}, {"apiVersions", {"v1"}}, {"operations", {"CREATE"}},
                     {"resources", {"pods"}}}}},
         {"failurePolicy", "Ignore"},
         {"timeoutSeconds", timeout_seconds},
         {"sideEffects", "None"},
         {"namespaceSelector",
          {{"matchLabels", {{"kubernetes.io/metadata.name", ns}}}}}}}}};
  if (Result<std::string> applied = cp.Kubectl({"apply", "-f", "-"}, configuration.dump()); !applied.ok())
    return Status::Error("registering the no-op webhook: " + applied.error());
  return hook;
}

NoopWebhook::~NoopWebhook() {
  (void)cp_.Kubectl({"delete", "mutatingwebhookconfiguration", kConfigurationName, "--ignore-not-found"});
  if (server_) server_->Stop();
}

}  // namespace graintune::bench
