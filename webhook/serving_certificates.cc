#include "webhook/serving_certificates.h"

#include <optional>

#include "base/atomic_file.h"
#include "kube/base64.h"
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
    Result<std::string> v = kube::Base64Decode(data.value(field, ""), std::string("secret ") + field);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (p.ca.empty() || p.cert.empty() || p.key.empty()) return Status::Error("the secret is incomplete");
  return p;
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

// A new CA and a serving certificate for o.dns_names signed by it.
Result<Pair> IssuePair(const ServingCertificateOptions& o) {
  Result<server::CertificateAuthority> ca = server::GenerateCertificateAuthority("graintune-webhook-ca", o.valid_days);
  if (!ca.ok()) return ca.status();
  Result<server::SignedCertificate> cert = server::IssueCertificate(
      *ca, {.common_name = o.dns_names.empty() ? "graintune-webhook" : o.dns_names.front(),
            .dns_names = o.dns_names, .server = true, .valid_days = o.valid_days});
  if (!cert.ok()) return cert.status();
  return Pair{ca->cert_pem, cert->cert_pem, cert->key_pem};
}

// The Secret holding `pair`, owned by `owner` when there is one; conditional on `read`'s
// resourceVersion when it replaces the Secret read.
json SecretOf(const ServingCertificateOptions& o, const Pair& pair, const std::optional<json>& owner,
              const kube::ApiResult<json>& read) {
  json body = {{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"type", "kubernetes.io/tls"},
               {"metadata", {{"name", o.secret_name}, {"namespace", o.secret_namespace},
                             {"labels", {{"app.kubernetes.io/managed-by", "graintune-webhook"}}}}},
               {"data", {{"ca.crt", kube::Base64Encode(pair.ca)},
                         {"tls.crt", kube::Base64Encode(pair.cert)},
                         {"tls.key", kube::Base64Encode(pair.key)}}}};
  if (owner) body["metadata"]["ownerReferences"] = json::array({*owner});
  if (read.ok())
    body["metadata"]["resourceVersion"] = read->value("metadata", json::object()).value("resourceVersion", "");
  return body;
}

// Issues a pair and writes it to the Secret. Replace is conditional on the version read, Create
// on the name being free: when two replicas race, exactly one write succeeds, and the other
// uses the winner's pair. `secret` becomes the Secret as stored.
Result<Pair> IssueAndStore(kube::Client& client, const ServingCertificateOptions& o,
                           const std::optional<json>& owner, kube::ApiResult<json>& secret,
                           bool& issued) {
  Result<Pair> fresh = IssuePair(o);
  if (!fresh.ok()) return fresh.status();
  const json body = SecretOf(o, *fresh, owner, secret);
  kube::ApiResult<json> written =
      secret.ok() ? client.Replace(kube::resources::kSecrets, o.secret_namespace, body)
                  : client.Create(kube::resources::kSecrets, o.secret_namespace, body);
  if (written.ok()) {
    issued = true;
    secret = written;
    return fresh;
  }
  if (!written.error().IsConflict()) return written.error().ToStatus();
  secret = client.Get(kube::resources::kSecrets, o.secret_namespace, o.secret_name);
  if (!secret.ok()) return secret.error().ToStatus();
  return FromSecret(*secret);
}

// Every webhook of the configuration trusts `ca`.
Status TrustCa(kube::Client& client, const json& configuration, const std::string& name,
               const std::string& ca) {
  const std::string bundle = kube::Base64Encode(ca);
  json patch = json::array();
  const json hooks = configuration.value("webhooks", json::array());
  for (size_t i = 0; i < hooks.size(); ++i)
    if (hooks[i].value("clientConfig", json::object()).value("caBundle", "") != bundle)
      patch.push_back({{"op", "add"},
                       {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"},
                       {"value", bundle}});
  if (patch.empty()) return Status::Ok();
  kube::ApiResult<json> r = client.Patch(kube::resources::kMutatingWebhookConfigurations, "", name,
                                         kube::PatchType::kJson, patch);
  return r.ok() ? Status::Ok() : r.error().ToStatus();
}

// The webhook configuration, when it exists; its absence is `missing` (Helm may create it after
// the webhook starts), any other error the result.
Result<std::optional<json>> ConfigurationOf(kube::Client& client, const std::string& name,
                                            std::optional<Status>& missing) {
  if (name.empty()) return std::optional<json>();
  kube::ApiResult<json> cfg = client.Get(kube::resources::kMutatingWebhookConfigurations, "", name);
  if (cfg.ok()) return std::optional<json>(*cfg);
  if (!cfg.error().IsNotFound()) return cfg.error().ToStatus();
  missing = cfg.error().ToStatus();
  return std::optional<json>();
}

}  // namespace

Result<bool> EnsureServingCertificate(kube::Client& client, const ServingCertificateOptions& o) {
  const long renew = std::chrono::duration_cast<std::chrono::seconds>(o.renew_before).count();
  // The configuration first: it owns the Secret. A missing one does not stop the pair from
  // being issued and served; it is reported at the end and the next call finishes the job.
  std::optional<Status> trust_error;
  Result<std::optional<json>> configuration = ConfigurationOf(client, o.webhook_configuration, trust_error);
  if (!configuration.ok()) return configuration.status();
  const std::optional<json> owner = *configuration ? OwnerReferenceTo(**configuration) : std::nullopt;

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
    Result<Pair> stored = IssueAndStore(client, o, owner, secret, issued);
    if (!stored.ok()) return stored.status();
    pair = *stored;
  }
  for (Status s : {WriteFileAtomically(o.cert_file, pair->cert), WriteFileAtomically(o.key_file, pair->key)})
    if (!s.ok()) return s;
  if (*configuration)
    if (Status s = TrustCa(client, **configuration, o.webhook_configuration, pair->ca); !s.ok()) return s;
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
