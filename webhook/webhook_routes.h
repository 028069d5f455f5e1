// The webhook binary's routes over an Admitter: POST /mutate, GET /healthz, /readyz, /metrics
// (Handle, on the admission port), and the last three alone (HandleProbe, on the probe port,
// where no admission runs). Content type must be application/json for /mutate (415 otherwise).
// Thread-safe.
#pragma once

#include <atomic>

#include "webhook/admission.h"
#include "server/https_server.h"
#include "webhook/webhook_metrics.h"

namespace graintune::webhook {

class WebhookRoutes {
 public:
  WebhookRoutes(const Admitter& admitter, WebhookMetrics& metrics)
      : admitter_(admitter), metrics_(metrics) {}
  server::HttpResponse Handle(const server::HttpRequest& request);
  server::HttpResponse HandleProbe(const server::HttpRequest& request) const;
  void SetReady(bool ready) { ready_ = ready; }

 private:
  const Admitter& admitter_;
  WebhookMetrics& metrics_;
  std::atomic<bool> ready_{true};
};

}  // namespace graintune::webhook
