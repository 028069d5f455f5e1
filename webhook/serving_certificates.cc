#include "webhook/serving_certificates.h"

#include <fstream>
#include <optional>

#include "base/base64.h"
#include "server/pki.h"

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
    Result<std::string> v = Base64Decode(data.value(field, ""), std::string("secret ") + field);
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

// The owner reference that makes the Secret go with the webhook configuration: Kubernetes'
// garbage collector deletes the Secret once `helm uninstall` deletes the configuration (a
// namespaced object may be owned by a cluster-scoped one). No blockOwnerDeletion, which would
// need rights on the configuration's finalizers.
std::optional<json> OwnerReferenceTo(const json& configuration) {
  const json meta = configuration.value("metadata", json::object());
  const std::string name = meta.value("name", ""), uid = meta.value("uid", "");
  if (name.empty() || uid.empty()) return std::nullopt;
  return json{{"apiVersion", "admissionregistration.k8s.io/v1"},
              {"kind", "MutatingWebhookConfiguration"},
              {"name", name},
              {"uid", uid}};
}

bool OwnedBy(const json& object, const json& owner) {
  const json refs = object.value("metadata", json::object()).value("ownerReferences", json::array());
  for (const json& r : refs)
    if (r.is_object() && r.value("uid", "") == owner["uid"]) return true;
  return false;
}

}  // namespace

Result<bool> EnsureServingCertificate(kube::Client& client, const ServingCertificateOptions& o) {
  const long renew = std::chrono::duration_cast<std::chrono::seconds>(o.renew_before).count();
  // The configuration first: it owns the Secret. Helm may create it after the webhook starts,
  // so a missing one does not stop the pair from being issued and served; it is reported at
  // the end and the next call finishes the job.
  std::optional<json> configuration;
  std::optional<Status> trust_error;
  if (!o.webhook_configuration.empty()) {
    kube::ApiResult<json> cfg =
        client.Get(kube::resources::kMutatingWebhookConfigurations, "", o.webhook_configuration);
    if (cfg.ok()) {
      configuration = *cfg;
    } else if (cfg.error().IsNotFound()) {
      trust_error = cfg.error().ToStatus();
    } else {
      return cfg.error().ToStatus();
    }
  }
  const std::optional<json> owner = configuration ? OwnerReferenceTo(*configuration) : std::nullopt;

  bool issued = false;
  std::optional<Pair> pair;
  kube::ApiResult<json> secret = client.Get(kube::resources::kSecrets, o.secret_namespace, o.secret_name);
  if (secret.ok()) {
    Result<Pair> p = FromSecret(*secret);
    if (p.ok()) {
      Result<long> left = server::SecondsUntilExpiry(p->cert);
      if (left.ok() && *left > renew) pair = *p;
    }
  } else if (!secret.error().IsNotFound()) {
    return secret.error().ToStatus();
  }
  if (!pair) {
    Result<server::CertificateAuthority> ca = server::GenerateCertificateAuthority("graintune-webhook-ca", o.valid_days);
    if (!ca.ok()) return ca.status();
    Result<server::SignedCertificate> cert = server::IssueCertificate(
        *ca, {.common_name = o.dns_names.empty() ? "graintune-webhook" : o.dns_names.front(),
              .dns_names = o.dns_names, .server = true, .valid_days = o.valid_days});
    if (!cert.ok()) return cert.status();
    Pair fresh{ca->cert_pem, cert->cert_pem, cert->key_pem};
    json body = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "kubernetes.io/tls"},
                 {"metadata", {{"name", o.secret_name}, {"namespace", o.secret_namespace},
                               {"labels", {{"app.kubernetes.io/managed-by", "graintune-webhook"}}}}},
                 {"data", {{"ca.crt", Base64Encode(fresh.ca)},
                           {"tls.crt", Base64Encode(fresh.cert)},
                           {"tls.key", Base64Encode(fresh.key)}}}};
    if (owner) body["metadata"]["ownerReferences"] = json::array({*owner});
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
      secret = written;
    } else if (written.error().IsConflict()) {
      // Another replica wrote first: use its pair.
      secret = client.Get(kube::resources::kSecrets, o.secret_namespace, o.secret_name);
      if (!secret.ok()) return secret.error().ToStatus();
      Result<Pair> p = FromSecret(*secret);
      if (!p.ok()) return p.status();
      pair = *p;
    } else {
      return written.error().ToStatus();
    }
  }
  for (Status s : {WriteAtomically(o.cert_file, pair->cert), WriteAtomically(o.key_file, pair->key)})
    if (!s.ok()) return s;

  // Trust: every webhook of the configuration gets the CA.
  if (configuration) {
    const std::string bundle = Base64Encode(pair->ca);
    json patch = json::array();
    const json hooks = configuration->value("webhooks", json::array());
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
  // A Secret written before its configuration existed (or by an older graintune) is adopted
  // now. A conflict means another replica changed it meanwhile; the next call looks again.
  if (owner && !OwnedBy(*secret, *owner)) {
    json adopted = *secret;
    adopted["metadata"]["ownerReferences"] = json::array({*owner});
    kube::ApiResult<json> r = client.Replace(kube::resources::kSecrets, o.secret_namespace, adopted);
    if (!r.ok() && !r.error().IsConflict()) return r.error().ToStatus();
  }
  if (trust_error) return *trust_error;
  return issued;
}

}  // namespace graintune::webhook
