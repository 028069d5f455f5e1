// A mutating admission webhook that does nothing: it reads each AdmissionReview and answers
// "allowed, unchanged" at once. The scale benchmark registers it for one namespace of its own, so
// the admission bursts measure what any webhook call costs on the same machine at the same
// moment (the API server's call, TLS, a JSON body each way), apart from what graintune's
// decisions add. It serves on 127.0.0.1 with a certificate from its own CA and the same
// server (server::HttpsServer, same thread count) as graintune-webhook.
//
// Errors as values (certificate, listen, kubectl apply). Unregistered and stopped when this
// object goes away.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "server/https_server.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::bench {

class NoopWebhook {
 public:
  // Serves, and registers a MutatingWebhookConfiguration for pod CREATE in `ns` only
  // (failurePolicy Ignore, `timeout_seconds`, like graintune's).
  static Result<std::unique_ptr<NoopWebhook>> Start(testing::ControlPlane& cp, const std::string& work_dir,
                                                    const std::string& ns, int threads, int timeout_seconds);
  ~NoopWebhook();

  // AdmissionReviews answered so far: the bench checks that every pod of its arm went through
  // (with failurePolicy Ignore, a webhook the API server cannot call admits pods unhooked).
  long answered() const { return answered_->load(); }

  static constexpr char kConfigurationName[] = "noop.bench.graintune.dev";

 private:
  explicit NoopWebhook(testing::ControlPlane& cp) : cp_(cp) {}
  testing::ControlPlane& cp_;
  std::unique_ptr<server::HttpsServer> server_;
  std::shared_ptr<std::atomic<long>> answered_ = std::make_shared<std::atomic<long>>(0);
};

}  // namespace graintune::bench
