// decode_only_server --port P --tls-cert-file C --tls-key-file K: graintune's HTTPS server
// (server/https_server.h, as graintune-webhook runs it: TLS, keep-alive, 2 I/O threads) doing
// exactly the Go baseline's work per request: parse the whole AdmissionReview with nlohmann_json
// and answer "allowed" for its uid. No planning, no patch.
//
// scripts/bench-webhook.sh runs it beside graintune-webhook and the Go webhook: it is the most
// graintune-webhook could serve on this stack, since every mutating request needs at least this
// parse. Its ratio to Go bounds the mutating ratio from above. Runs until killed.
#include <csignal>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "server/flags.h"
#include "server/https_server.h"

int main(int argc, char** argv) {
  using namespace graintune;
  using json = nlohmann::json;
  const char* program = "decode_only_server";
  const server::Flags flags = server::ExitOnUsageError(
      program, server::Flags::Parse(server::Arguments(argc, argv),
                                    {"port", "tls-cert-file", "tls-key-file"}));
  server::HttpsServerOptions options;
  options.port = static_cast<unsigned short>(
      server::ExitOnUsageError(program, flags.IntegerIn("port", 0, 65535)).value_or(0));
  options.cert_file = flags.Get("tls-cert-file").value_or("");
  options.key_file = flags.Get("tls-key-file").value_or("");
  server::HttpsServer server(options, [](const server::HttpRequest& request) {
    const json review = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (review.is_discarded() || !review.is_object())
      return server::HttpResponse{400, "application/json", R"({"error":"malformed"})"};
    const json request_part = review.value("request", json::object());
    const std::string uid = request_part.is_object() ? request_part.value("uid", "") : "";
    return server::HttpResponse{200, "application/json",
                        json{{"apiVersion", "admission.k8s.io/v1"},
                             {"kind", "AdmissionReview"},
                             {"response", {{"uid", uid}, {"allowed", true}}}}
                            .dump()};
  });
  // Blocked before the I/O threads start, so they inherit it and sigwait below gets the signal.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (auto s = server.Start(); !s.ok()) {
    std::cerr << "decode_only_server: " << s.message() << "\n";
    return 1;
  }
  int sig = 0;
  sigwait(&set, &sig);
  server.Stop();
  return 0;
}
