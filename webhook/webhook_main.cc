// graintune-webhook: the mutating admission webhook. Parses flags and wires the parts.
//
// Flags: WebhookCommand() (webhook/webhook_flags.h; also `graintune-webhook --help`). Sources
// of a decision: webhook/webhook_sources.h. /healthz, /readyz and /metrics are also served over
// plain HTTP on --health-port (default 8081, 0: off) by a thread of their own, so no admission
// in progress can delay a probe; /readyz waits for every cache. On SIGTERM the webhook turns
// unready, keeps serving for --shutdown-delay (the API server learns the endpoint is gone), then
// drains for at most --shutdown-grace (server/lifecycle.h); the chart's
// terminationGracePeriodSeconds covers both.
#include <optional>

#include "base/log.h"
#include "server/flags.h"
#include "server/https_server.h"
#include "server/lifecycle.h"
#include "webhook/admission.h"
#include "webhook/serving_certificates.h"
#include "webhook/webhook_flags.h"
#include "webhook/webhook_routes.h"
#include "webhook/webhook_sources.h"

namespace {

using namespace graintune;

// Re-issues the serving certificate ahead of expiry every 12 hours (an hour after a failure);
// the server picks the new files up by itself.
std::function<void()> CertificateRenewal(std::shared_ptr<kube::Client> client,
                                         webhook::ServingCertificateOptions options) {
  auto next = std::make_shared<Clock::SteadyTime>(RealClock().SteadyNow() + std::chrono::hours(12));
  return [client, options, next] {
    if (RealClock().SteadyNow() < *next) return;
    Result<bool> r = webhook::EnsureServingCertificate(*client, options);
    if (!r.ok()) LogLine(LogLevel::kError) << "certificate renewal: " << r.error();
    *next = RealClock().SteadyNow() + (r.ok() ? std::chrono::hours(12) : std::chrono::hours(1));
  };
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServerCommand& command = webhook::WebhookCommand();
  const server::Flags flags = server::ParseServerFlags(command, argc, argv);
  const webhook::WebhookConfig config =
      server::ExitOnUsageError(command.program, webhook::WebhookConfigFromFlags(flags));
  auto sources = webhook::WebhookSources::Connect(config);
  if (!sources.ok()) {
    LogLine(LogLevel::kError) << sources.error().message;
    return sources.error().exit_status;
  }
  webhook::Admitter admitter((*sources)->planner(), config.admit);
  webhook::WebhookMetrics metrics;
  webhook::WebhookRoutes routes(admitter, metrics);
  server::HttpsServerOptions https = config.https;
  https.on_connection_shed = [&metrics](server::ShedReason reason) {
    metrics.ConnectionShed(server::ShedReasonName(reason));
  };
  server::HttpsServer server(std::move(https), [&](const server::HttpRequest& r) { return routes.Handle(r); });
  if (Status s = server.Start(); !s.ok()) {
    LogLine(LogLevel::kError) << s.message();
    return 1;
  }
  LogLine(LogLevel::kInfo) << "serving on " << config.https.bind_address << ":" << server.port();
  server::Lifecycle lifecycle({.shutdown_delay = config.shutdown_delay, .shutdown_grace = config.shutdown_grace});
  lifecycle.AddServer(server);
  std::optional<server::HttpsServer> probes;
  if (config.health_port > 0) {
    probes.emplace(webhook::ProbeServerOptions(config),
                   [&](const server::HttpRequest& r) { return routes.HandleProbe(r); });
    if (Status s = probes->Start(); !s.ok()) {
      LogLine(LogLevel::kError) << "health port: " << s.message();
      return 1;
    }
    LogLine(LogLevel::kInfo) << "probes and metrics on http://" << config.https.bind_address << ":"
                             << probes->port();
    lifecycle.AddServer(*probes);
  }
  for (const std::shared_ptr<kube::Informer>& i : (*sources)->informers())
    lifecycle.AddCache({[i] { i->Start(); }, [i] { return i->Synced(); }, [i] { i->Stop(); }});
  if (std::shared_ptr<kube::Client> client = (*sources)->certificate_client())
    lifecycle.Every(CertificateRenewal(client, *config.self_signed));
  // Not ready until the caches are: the API server then sends requests to a replica that is.
  lifecycle.Run([&](bool ready) { routes.SetReady(ready); });
  return 0;
}
