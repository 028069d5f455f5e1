// graintune-webhook: the mutating admission webhook. Parses flags and wires the parts.
//
//   graintune-webhook --tls-cert-file F --tls-key-file F [--bind-address A] [--port N]
//                     [--policy-file P.yaml] [--exclude-namespace NS]...
// Without --kubeconfig it runs standalone: host shapes from the machine-type table, the
// built-in policy (or --policy-file), no history.
#include <charconv>
#include <csignal>
#include <iostream>
#include <thread>

#include "webhook/admission.h"
#include "webhook/fake_sources.h"
#include "webhook/https_server.h"
#include "webhook/webhook_routes.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

// An integer flag in [lo, hi]; anything else is a usage error (exit 2), never an exception.
int IntFlag(const std::string& flag, const std::string& text, int lo, int hi) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < lo || value > hi) {
    std::cerr << "graintune-webhook: " << flag << " wants an integer in [" << lo << ", " << hi
              << "], got '" << text << "'\n";
    std::exit(2);
  }
  return value;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace graintune::webhook;
  HttpsServerOptions options;
  options.port = 8443;
  options.bind_address = "0.0.0.0";
  AdmitterOptions admit;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "graintune-webhook: " << flag << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--tls-cert-file") options.cert_file = value();
    else if (flag == "--tls-key-file") options.key_file = value();
    else if (flag == "--bind-address") options.bind_address = value();
    else if (flag == "--port") options.port = static_cast<unsigned short>(IntFlag(flag, value(), 1, 65535));
    else if (flag == "--threads") options.threads = IntFlag(flag, value(), 1, 64);
    else if (flag == "--exclude-namespace") admit.excluded_namespaces.insert(value());
    else {
      std::cerr << "graintune-webhook: unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (options.cert_file.empty() || options.key_file.empty()) {
    std::cerr << "graintune-webhook: --tls-cert-file and --tls-key-file are required\n";
    return 2;
  }
  MachineTypeTableShapes shapes;
  InMemoryHistory history;
  InMemoryConfigMaps configmaps;
  FixedPolicy policies;
  Admitter admitter(PlannerSources{shapes, history, configmaps, policies}, admit);
  WebhookMetrics metrics;
  WebhookRoutes routes(admitter, metrics);
  HttpsServer server(options, [&](const HttpRequest& r) { return routes.Handle(r); });
  if (graintune::Status s = server.Start(); !s.ok()) {
    std::cerr << "graintune-webhook: " << s.message() << "\n";
    return 1;
  }
  std::cerr << "graintune-webhook: serving on " << options.bind_address << ":" << server.port() << "\n";
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server.Stop();
  return 0;
}
