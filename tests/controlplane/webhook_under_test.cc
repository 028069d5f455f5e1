#include "tests/controlplane/webhook_under_test.h"


#include <cstdio>
#include <fstream>
#include <thread>

#include "kube/base64.h"
#include "server/pki.h"

namespace graintune::testing {
kube::Json WebhookConfiguration(const std::string& name, const std::string& url,
                                const std::string& ca_pem) {
  const kube::Json rules = kube::Json::array(
      {{{"apiGroups", {"batch"}}, {"apiVersions", {"v1"}}, {"operations", {"CREATE"}},
        {"resources", {"jobs"}}},
       {{"apiGroups", {"jobset.x-k8s.io"}}, {"apiVersions", {"v1alpha2"}},
        {"operations", {"CREATE"}}, {"resources", {"jobsets"}}},
       {{"apiGroups", {""}}, {"apiVersions", {"v1"}}, {"operations", {"CREATE"}},
        {"resources", {"pods"}}}});
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingWebhookConfiguration"},
          {"metadata", {{"name", name}}},
          {"webhooks",
           {{{"name", "workers.graintune.dev"},
             {"admissionReviewVersions", {"v1"}},
             {"clientConfig", {{"url", url + "/mutate"}, {"caBundle", kube::Base64Encode(ca_pem)}}},
             {"rules", rules},
             {"failurePolicy", "Ignore"},
             {"sideEffects", "None"},
             {"timeoutSeconds", 5},
             {"reinvocationPolicy", "IfNeeded"},
             {"namespaceSelector",
              {{"matchExpressions",
                {{{"key", "kubernetes.io/metadata.name"}, {"operator", "NotIn"},
                  {"values", {"kube-system"}}}}}}}}}}};
}

Result<std::unique_ptr<WebhookUnderTest>> WebhookUnderTest::Start(
    ControlPlane& cp, const WebhookUnderTestOptions& options) {
  std::unique_ptr<WebhookUnderTest> w(new WebhookUnderTest());
  w->cp_ = &cp;
  w->name_ = options.configuration_name;
  Result<server::CertificateAuthority> ca = server::GenerateCertificateAuthority("graintune-webhook-test-ca", 2);
  if (!ca.ok()) return ca.status();
  Result<server::SignedCertificate> cert = server::IssueCertificate(
      *ca, {.common_name = "127.0.0.1", .ip_addresses = {"127.0.0.1"}, .server = true,
            .valid_days = 2});
  if (!cert.ok()) return cert.status();
  w->ca_pem_ = ca->cert_pem;
  w->ca_ = *ca;
  const std::string base = cp.dir() + "/webhook-" + w->name_;
  w->cert_base_ = base;
  std::ofstream(base + ".crt") << cert->cert_pem;
  std::ofstream(base + ".key") << cert->key_pem;
  Result<int> port = FreeLoopbackPort();
  if (!port.ok()) return port.status();
  w->port_ = *port;
  // Its plain-HTTP probe port too: the default (8081) would collide between webhooks started
  // at once (tests run in parallel, the demo beside them).
  Result<int> probe_port = FreeLoopbackPort();
  if (!probe_port.ok()) return probe_port.status();
  w->health_port_ = *probe_port;
  std::vector<std::string> argv = {options.binary, "--tls-cert-file", base + ".crt",
                                   "--tls-key-file", base + ".key", "--bind-address", "127.0.0.1",
                                   "--port", std::to_string(w->port_), "--health-port",
                                   std::to_string(w->health_port_), "--kubeconfig",
                                   options.kubeconfig.empty() ? cp.kubeconfig_path()
                                                              : options.kubeconfig};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  Result<ChildProcess> p = ChildProcess::Spawn(argv, base + ".log", options.env);
  if (!p.ok()) return p.status();
  w->process_ = std::move(p).value();

  kube::ClientConfig probe;
  probe.server = "https://127.0.0.1:" + std::to_string(w->port_);
  probe.ca_pem = w->ca_pem_;
  auto client = kube::Client::FromConfig(probe);
  if (!client.ok()) return client.error().ToStatus();
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    if (!w->process_.Running()) return Status::Error("graintune-webhook exited:\n" + w->Log());
    kube::ApiResult<std::string> r = (*client)->GetRaw("/readyz");
    ready = r.ok();
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!ready) return Status::Error("graintune-webhook never became ready:\n" + w->Log());
  if (!options.register_configuration) {
    w->cp_ = nullptr;  // nothing of ours to remove later
    return w;
  }
  kube::ApiResult<kube::Json> reg = cp.AdminClient()->Apply(
      kube::resources::kMutatingWebhookConfigurations, "",
      WebhookConfiguration(w->name_, probe.server, w->ca_pem_));
  if (!reg.ok()) return reg.error().ToStatus();
  return w;
}

Status WebhookUnderTest::RotateCertificate(const std::string& common_name) {
  Result<server::SignedCertificate> cert = server::IssueCertificate(
      ca_, {.common_name = common_name, .ip_addresses = {"127.0.0.1"}, .server = true,
             .valid_days = 2});
  if (!cert.ok()) return cert.status();
  // The key first: the server reloads only a pair that loads together, so a moment where the
  // new key sits beside the old certificate is read as a bad pair and the old one is kept.
  for (const auto& [suffix, pem] : {std::pair{".key", cert->key_pem}, std::pair{".crt", cert->cert_pem}}) {
    const std::string path = cert_base_ + suffix;
    if (Status s = WriteFile(path + ".next", pem); !s.ok()) return s;
    if (std::rename((path + ".next").c_str(), path.c_str()) != 0)
      return Status::Error("cannot rename " + path + ".next");
  }
  return Status::Ok();
}

WebhookUnderTest::~WebhookUnderTest() {
  if (cp_) {
    if (auto client = cp_->AdminClient())
      client->Delete(kube::resources::kMutatingWebhookConfigurations, "", name_);
  }
  process_.Stop(std::chrono::seconds(5));
}

}  // namespace graintune::testing
