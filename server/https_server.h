// HttpsServer: the one HTTP(S) server component of every graintune binary (Boost.Beast on
// Boost.Asio with OpenSSL): the webhook's /mutate, and /metrics, /healthz, /readyz.
//
// TLS 1.2 minimum, keep-alive, request bodies capped at max_body_bytes (larger ones get 413
// without being read), a read timeout so a silent client cannot hold a connection, an idle
// timeout between requests, and at most max_connections open at once. The
// certificate and key files are re-read when their content changes (Secret volumes swap a
// symlink): new connections use the new pair, connections already open keep theirs, so no
// request is dropped; a pair that fails to load is reported and the old one kept.
// Start() binds (port 0 picks a free port) and runs `threads` I/O threads; Stop() closes the
// listener, stops the I/O threads and joins them (open connections are dropped). The handler runs on I/O threads and must
// be thread-safe and non-blocking.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace graintune::server {

struct HttpRequest {
  std::string method;
  std::string target;
  std::string content_type;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpsServerOptions {
  std::string bind_address = "127.0.0.1";
  unsigned short port = 0;
  std::string cert_file;  // PEM; empty cert_file and key_file: plain HTTP (metrics, tests)
  std::string key_file;
  size_t max_body_bytes = 3 * 1024 * 1024;
  int threads = 2;
  int read_timeout_seconds = 30;  // to read one request (TLS handshake included)
  // A kept-alive connection with no request for this long is closed (each idle TLS connection
  // holds ~75 KB: the API server reconnects in a moment, a crowd of idle clients does not last).
  int idle_timeout_seconds = 10;
  // Connections open at once; one more is closed as soon as it is accepted (bounds memory:
  // 3,500 idle TLS connections held 262 MB).
  int max_connections = 1024;
  int reload_check_milliseconds = 1000;
};

class HttpsServer {
 public:
  HttpsServer(HttpsServerOptions options, HttpHandler handler);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  Status Start();
  void Stop();
  unsigned short port() const { return port_; }
  // How many times a changed certificate pair was loaded since Start.
  int reloads() const { return reloads_.load(); }
  // Connections open now, and those closed at accept because max_connections were open.
  int open_connections() const { return open_connections_.load(); }
  long refused_connections() const { return refused_connections_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  unsigned short port_ = 0;
  std::atomic<int> reloads_{0};
  std::atomic<int> open_connections_{0};
  std::atomic<long> refused_connections_{0};
};

}  // namespace graintune::server
