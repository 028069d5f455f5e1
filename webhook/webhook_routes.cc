#include "webhook/webhook_routes.h"

#include <chrono>

#include "base/log.h"

namespace graintune::webhook {

server::HttpResponse WebhookRoutes::Handle(const server::HttpRequest& request) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/mutate") {
    if (request.method != "POST") return {405, "application/json", R"({"error":"POST only"})"};
    if (request.content_type.rfind("application/json", 0) != 0)
      return {415, "application/json", R"({"error":"Content-Type must be application/json"})"};
    const auto start = std::chrono::steady_clock::now();
    AdmissionResult r = admitter_.Admit(request.body);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics_.Observe(r.kind, r.outcome, seconds, r.mutations, r.over_budget);
    LogLine(LogLevel::kDebug) << "admission " << r.kind << ": " << r.outcome << ", "
                              << r.mutations << " value(s) set, HTTP " << r.http_status << ", "
                              << static_cast<int>(seconds * 1e6) << " us";
    return {r.http_status, "application/json", std::move(r.body)};
  }
  return HandleProbe(request);
}

server::HttpResponse WebhookRoutes::HandleProbe(const server::HttpRequest& request) const {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  if (path == "/readyz") return ready_ ? server::HttpResponse{200, "text/plain", "ok\n"}
                                       : server::HttpResponse{503, "text/plain", "not ready\n"};
  if (path == "/metrics") return {200, "text/plain; version=0.0.4", metrics_.Exposition()};
  return {404, "application/json", R"({"error":"not found"})"};
}

}  // namespace graintune::webhook
