#include "webhook/webhook_flags.h"

#include "webhook/exporter_flags.h"

namespace graintune::webhook {
namespace {

using server::FlagSpec;

std::vector<FlagSpec> WebhookFlags() {
  const server::HttpsServerOptions https;
  const WorkLimits limits;
  std::vector<FlagSpec> flags = {
      {.name = "tls-cert-file", .value_name = "F", .help = "serving certificate (PEM)", .required = true},
      {.name = "tls-key-file", .value_name = "F", .help = "its key (PEM)", .required = true},
      {.name = "bind-address", .value_name = "A", .default_text = "0.0.0.0", .help = "address to serve on"},
      {.name = "port", .value_name = "N", .default_text = "8443", .help = "admission port (HTTPS)"},
      {.name = "threads", .value_name = "N", .default_text = std::to_string(https.threads),
       .help = "I/O threads (1-64)"},
      {.name = "kubeconfig", .value_name = "K", .help = "API access (else in-cluster, $KUBECONFIG or ~/.kube/config)"},
      {.name = "standalone", .help = "no API access: the machine-type table, no history"},
      {.name = "policy-file", .value_name = "P.yaml", .help = "GrainTunePolicies to apply (with --standalone)"},
      {.name = "exclude-namespace", .value_name = "NS", .help = "never touched (besides kube-system)",
       .repeated = true},
      {.name = "health-port", .value_name = "N", .default_text = "8081",
       .help = "/healthz, /readyz and /metrics over plain HTTP (0: off)"},
      {.name = "max-connections", .value_name = "N", .default_text = std::to_string(https.max_connections),
       .help = "connections open at once"},
      {.name = "max-idle-per-source", .value_name = "N",
       .default_text = std::to_string(https.max_idle_per_source),
       .help = "of them one client address may keep idle or slow (busy ones are not limited)"},
      {.name = "max-inflight-body-mib", .value_name = "N",
       .default_text = std::to_string(https.max_inflight_body_bytes >> 20),
       .help = "request bodies being read or answered at once (3-4096)"},
      {.name = "header-timeout", .value_name = "D", .default_text = std::to_string(https.header_timeout_seconds) + "s",
       .help = "to read a connection's first request header (1s-1h)"},
      {.name = "read-timeout", .value_name = "D", .default_text = std::to_string(https.read_timeout_seconds) + "s",
       .help = "to read a request's body (1s-1h)"},
      // The API server keeps idle webhook connections for 90 s (Go's default): closing ours
      // earlier races its next request on that connection, which fails ("broken pipe") and is
      // admitted unchanged. Seen at 2,048 hosts: a Job retry kept attempt 0's value.
      {.name = "idle-timeout", .value_name = "D", .default_text = "120s",
       .help = "a kept-alive connection with no request is closed after this (1s-1h)"},
      {.name = "max-json-values", .value_name = "N", .default_text = std::to_string(limits.max_json_values),
       .help = "JSON values one admission may read"},
      {.name = "max-sites", .value_name = "N", .default_text = std::to_string(limits.max_sites),
       .help = "places a -1 may be written in one object"},
      {.name = "max-request-ms", .value_name = "N", .default_text = std::to_string(limits.max_time.count()),
       .help = "time one admission may take"},
      {.name = "shutdown-delay", .value_name = "D", .default_text = "5s",
       .help = "on SIGTERM, unready but serving for this long (the API server learns the endpoint is gone)"},
      {.name = "shutdown-grace", .value_name = "D", .default_text = "20s",
       .help = "then requests in progress are answered for at most this long"},
      {.name = "cert-secret", .value_name = "NS/NAME",
       .help = "self-managed certificates: the Secret that keeps the CA and serving pair"},
      {.name = "cert-dir", .value_name = "DIR", .help = "where the pair is written (with --cert-secret)"},
      {.name = "service-dns-name", .value_name = "DNS", .help = "the serving certificate's names (with --cert-secret)",
       .repeated = true},
      {.name = "webhook-configuration", .value_name = "NAME",
       .help = "the MutatingWebhookConfiguration given the CA (with --cert-secret)"}};
  flags.insert(flags.end(), ExporterFlagSpecs().begin(), ExporterFlagSpecs().end());
  return flags;
}

// The HTTPS server's limits and timeouts from their flags.
Status ReadServing(const server::Flags& flags, server::HttpsServerOptions& o) {
  Result<std::optional<int>> port = flags.IntegerIn("port", 1, 65535);
  Result<std::optional<int>> threads = flags.IntegerIn("threads", 1, 64);
  Result<std::optional<int>> max = flags.IntegerIn("max-connections", 1, 65536);
  Result<std::optional<int>> idle_per_source = flags.IntegerIn("max-idle-per-source", 1, 65536);
  Result<std::optional<int>> body_mib = flags.IntegerIn("max-inflight-body-mib", 3, 4096);
  for (const auto* r : {&port, &threads, &max, &idle_per_source, &body_mib})
    if (!r->ok()) return r->status();
  o.bind_address = *flags.Get("bind-address");
  o.port = static_cast<unsigned short>(**port);
  o.threads = **threads;
  o.max_connections = **max;
  o.max_idle_per_source = **idle_per_source;
  o.max_inflight_body_bytes = static_cast<size_t>(**body_mib) << 20;
  for (auto [name, field] : {std::pair{"header-timeout", &o.header_timeout_seconds},
                             std::pair{"read-timeout", &o.read_timeout_seconds},
                             std::pair{"idle-timeout", &o.idle_timeout_seconds}}) {
    Result<std::optional<std::chrono::seconds>> d = flags.Duration(name);
    if (!d.ok()) return d.status();
    if (**d < std::chrono::seconds(1) || **d > std::chrono::hours(1))
      return Status::Error(std::string("--") + name + " must be in [1s, 1h]");
    *field = static_cast<int>((*d)->count());
  }
  return Status::Ok();
}

// What one admission may cost, and what it never touches.
Status ReadAdmission(const server::Flags& flags, AdmitterOptions& admit) {
  Result<std::optional<int>> values = flags.IntegerIn("max-json-values", 1000, 10'000'000);
  Result<std::optional<int>> sites = flags.IntegerIn("max-sites", 1, 1'000'000);
  Result<std::optional<int>> ms = flags.IntegerIn("max-request-ms", 1, 60'000);
  for (const auto* r : {&values, &sites, &ms})
    if (!r->ok()) return r->status();
  admit.limits.max_json_values = static_cast<size_t>(**values);
  admit.limits.max_sites = **sites;
  admit.limits.max_time = std::chrono::milliseconds(**ms);
  for (const std::string& ns : flags.All("exclude-namespace")) admit.excluded_namespaces.insert(ns);
  Result<std::optional<ExporterInjection>> exporter = ExporterFromFlags(flags);
  if (!exporter.ok()) return exporter.status();
  admit.exporter = *exporter;
  return Status::Ok();
}

// The serving pair: the files given, or (--cert-secret) the ones the webhook keeps itself.
Status ReadCertificates(const server::Flags& flags, WebhookConfig& config) {
  config.https.cert_file = flags.Get("tls-cert-file").value_or("");
  config.https.key_file = flags.Get("tls-key-file").value_or("");
  if (std::optional<std::string> secret = flags.Get("cert-secret")) {
    const size_t slash = secret->find('/');
    if (slash == std::string::npos) return Status::Error("--cert-secret wants NAMESPACE/NAME");
    ServingCertificateOptions& s = config.self_signed.emplace();
    s.secret_namespace = secret->substr(0, slash);
    s.secret_name = secret->substr(slash + 1);
    s.webhook_configuration = flags.Get("webhook-configuration").value_or("");
    s.dns_names = flags.All("service-dns-name");
    const std::string dir = flags.Get("cert-dir").value_or("");
    if (dir.empty() || s.dns_names.empty())
      return Status::Error("--cert-secret needs --cert-dir and --service-dns-name");
    if (config.standalone) return Status::Error("--cert-secret needs API access, not --standalone");
    config.https.cert_file = s.cert_file = dir + "/tls.crt";
    config.https.key_file = s.key_file = dir + "/tls.key";
  }
  if (config.https.cert_file.empty() || config.https.key_file.empty())
    return Status::Error("--tls-cert-file and --tls-key-file (or --cert-secret) are required");
  return Status::Ok();
}

}  // namespace

const server::ServerCommand& WebhookCommand() {
  static const server::ServerCommand kCommand{.program = "graintune-webhook",
                                              .summary = "graintune's mutating admission webhook.",
                                              .flags = WebhookFlags()};
  return kCommand;
}

Result<WebhookConfig> WebhookConfigFromFlags(const server::Flags& flags) {
  WebhookConfig config;
  config.kubeconfig = flags.Get("kubeconfig").value_or("");
  config.standalone = flags.Bool("standalone");
  config.policy_file = flags.Get("policy-file").value_or("");
  Result<std::optional<int>> health = flags.IntegerIn("health-port", 0, 65535);
  Result<std::optional<std::chrono::seconds>> delay = flags.Duration("shutdown-delay");
  Result<std::optional<std::chrono::seconds>> grace = flags.Duration("shutdown-grace");
  if (!health.ok()) return health.status();
  if (!delay.ok()) return delay.status();
  if (!grace.ok()) return grace.status();
  config.health_port = **health;
  config.shutdown_delay = **delay;
  config.shutdown_grace = **grace;
  for (Status s : {ReadServing(flags, config.https), ReadAdmission(flags, config.admit),
                   ReadCertificates(flags, config)})
    if (!s.ok()) return s;
  return config;
}

server::HttpsServerOptions ProbeServerOptions(const WebhookConfig& config) {
  server::HttpsServerOptions probes;
  probes.bind_address = config.https.bind_address;
  probes.port = static_cast<unsigned short>(config.health_port);
  probes.threads = 1;
  probes.max_body_bytes = 4096;
  probes.max_connections = 64;
  return probes;
}

}  // namespace graintune::webhook
