#include "webhook/serving_certificates.h"

#include <fstream>

#include "kube/base64.h"
#include "kube/pki.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

struct Pair {
  std::string ca, cert, key;
};

Result<Pair> FromSecret(const json& secret) {
  const json data = secret.value("data", json::object());
  Pair p;
  for (auto [field, out] : {std::pair{"ca.crt", &p.ca}, {"tls.crt", &p.cert}, {"tls.key", &p.key}}) {
    Result<std::string> v = kube::Base64Decode(data.value(field, ""), std::string("secret ") + field);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (p.ca.empty() || p.cert.empty() || p.key.empty()) return Status::Error("the secret is incomplete");
  return p;
}

Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    if (!out) return Status::Error("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::Error("cannot replace '" + path + "'");
  return Status::Ok();
}

}  // namespace

Result<bool> EnsureServingCertificate(kube::Client& client, const ServingCertificateOptions& o) {
  const long renew = std::chrono::duration_cast<std::chrono::seconds>(o.renew_before).count();
  bool issued = false;
  std::optional<Pair> pair;
  kube::ApiResult<json> secret = client.Get(kube::resources::kSecrets, o.secret_namespace, o.secret_name);
  if (secret.ok()) {
    Result<Pair> p = FromSecret(*secret);
    if (p.ok()) {
      Result<long> left = kube::SecondsUntilExpiry(p->cert);
      if (left.ok() && *left > renew) pair = *p;
    }
  } else if (!secret.error().IsNotFound()) {
    return secret.error().ToStatus();
  }
  if (!pair) {
    Result<kube::CertificateAuthority> ca = kube::GenerateCertificateAuthority("graintune-webhook-ca", o.valid_days);
    if (!ca.ok()) return ca.status();
    Result<kube::SignedCertificate> cert = kube::IssueCertificate(
        *ca, {.common_name = o.dns_names.empty() ? "graintune-webhook" : o.dns_names.front(),
              .dns_names = o.dns_names, .server = true, .valid_days = o.valid_days});
    if (!cert.ok()) return cert.status();
    Pair fresh{ca->cert_pem, cert->cert_pem, cert->key_pem};
    json body = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "kubernetes.io/tls"},
                 {"metadata", {{"name", o.secret_name}, {"namespace", o.secret_namespace},
                               {"labels", {{"app.kubernetes.io/managed-by", "graintune-webhook"}}}}},
                 {"data", {{"ca.crt", kube::Base64Encode(fresh.ca)},
                           {"tls.crt", kube::Base64Encode(fresh.cert)},
                           {"tls.key", kube::Base64Encode(fresh.key)}}}};
    // Replace is conditional on the version we read, Create on the name being free: when two
    // replicas race, exactly one write succeeds.
    if (secret.ok())
      body["metadata"]["resourceVersion"] =
          secret->value("metadata", json::object()).value("resourceVersion", "");
    kube::ApiResult<json> written =
        secret.ok() ? client.Replace(kube::resources::kSecrets, o.secret_namespace, body)
                    : client.Create(kube::resources::kSecrets, o.secret_namespace, body);
    if (written.ok()) {
      pair = fresh;
      issued = true;
    } else if (written.error().IsConflict()) {
      // Another replica wrote first: use its pair.
      kube::ApiResult<json> again = client.Get(kube::resources::kSecrets, o.secret_namespace, o.secret_name);
      if (!again.ok()) return again.error().ToStatus();
      Result<Pair> p = FromSecret(*again);
      if (!p.ok()) return p.status();
      pair = *p;
    } else {
      return written.error().ToStatus();
    }
  }
  for (Status s : {WriteAtomically(o.cert_file, pair->cert), WriteAtomically(o.key_file, pair->key)})
    if (!s.ok()) return s;

  // Trust: every webhook of the configuration gets the CA.
  if (!o.webhook_configuration.empty()) {
    kube::ApiResult<json> cfg =
        client.Get(kube::resources::kMutatingWebhookConfigurations, "", o.webhook_configuration);
    if (!cfg.ok()) return cfg.error().ToStatus();
    const std::string bundle = kube::Base64Encode(pair->ca);
    json patch = json::array();
    const json hooks = cfg->value("webhooks", json::array());
    for (size_t i = 0; i < hooks.size(); ++i)
      if (hooks[i].value("clientConfig", json::object()).value("caBundle", "") != bundle)
        patch.push_back({{"op", "add"},
                         {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"},
                         {"value", bundle}});
    if (!patch.empty()) {
      kube::ApiResult<json> r = client.Patch(kube::resources::kMutatingWebhookConfigurations, "",
                                             o.webhook_configuration, kube::PatchType::kJson, patch);
      if (!r.ok()) return r.error().ToStatus();
    }
  }
  return issued;
}

}  // namespace graintune::webhook
