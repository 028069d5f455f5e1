// HttpsServer: the one HTTP(S) server component of every graintune binary (Boost.Beast on
// Boost.Asio with OpenSSL): the webhook's /mutate, and /metrics, /healthz, /readyz.
//
// TLS 1.2 minimum, keep-alive, request bodies capped at max_body_bytes (larger ones get 413
// without being read), a header timeout and a body read timeout so a silent or slow client
// cannot hold a connection, an idle timeout between requests, at most max_connections open at
// once, idle and slow connections shed per client address and at the ceiling while connections
// carrying requests are never shed (server/connection_budget.h), and at most
// max_inflight_body_bytes of request bodies being read or answered at once
// (one more gets 503 with Retry-After; the API server then fails open). Memory is thereby
// bounded: ~75 KB per open TLS connection plus the in-flight bodies plus what the handler
// holds per I/O thread. The
// certificate and key files are re-read when their content changes (Secret volumes swap a
// symlink): new connections use the new pair, connections already open keep theirs, so no
// request is dropped; a pair that fails to load is reported and the old one kept.
// Start() binds (port 0 picks a free port) and runs `threads` I/O threads. Drain(grace) stops
// accepting, closes connections waiting for a request, lets requests in progress be answered
// (each the last on its connection), then stops; Stop() closes the listener, stops the I/O
// threads and joins them at once (open connections are dropped). The handler runs on I/O
// threads and must be thread-safe and bounded in time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/connection_budget.h"

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
  // To read a connection's first request header (TLS handshake included), then any request's
  // body.
  int header_timeout_seconds = 5;
  int read_timeout_seconds = 30;
  // A kept-alive connection with no request for this long is closed (each idle TLS connection
  // holds ~75 KB: the API server reconnects in a moment, a crowd of idle clients does not last).
  int idle_timeout_seconds = 10;
  // Connections open at once (bounds memory: 3,500 idle TLS connections held 262 MB). One more
  // takes the slot of the oldest idle connection of the address holding the most idle ones,
  // and is closed at accept only when every open one is at work. An address keeps at most
  // max_idle_per_source connections idle (no request for idle_grace_milliseconds) or slow (a
  // body still arriving after that); connections carrying requests are not limited per address.
  // The rule and its numbers: ConnectionBudget.
  int max_connections = 1024;
  int max_idle_per_source = 128;
  int idle_grace_milliseconds = 1000;
  // Told of every connection closed at accept or reclaimed, on an I/O thread (metrics).
  std::function<void(ShedReason)> on_connection_shed;
  // Request bodies being read or answered at once (a body without Content-Length counts as
  // max_body_bytes).
  size_t max_inflight_body_bytes = 32 * 1024 * 1024;
  int reload_check_milliseconds = 1000;
};

class HttpsServer {
 public:
  HttpsServer(HttpsServerOptions options, HttpHandler handler);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  Status Start();
  // True when every connection ended within `grace`; either way the server is stopped after.
  bool Drain(std::chrono::milliseconds grace);
  void Stop();
  unsigned short port() const { return port_; }
  // How many times a changed certificate pair was loaded since Start.
  int reloads() const { return reloads_.load(); }
  // Connections open now; those closed at accept because max_connections were open and at
  // work; those shed for `reason` (refused or reclaimed) since Start.
  int open_connections() const;
  int connections_at_work() const;  // reading or answering a request
  long refused_connections() const { return shed_connections(ShedReason::kRefusedFull); }
  long shed_connections(ShedReason reason) const;
  // Requests answered 503 because max_inflight_body_bytes were in flight, and the bytes now.
  long busy_refusals() const;
  size_t inflight_body_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  unsigned short port_ = 0;
  std::atomic<int> reloads_{0};
};

}  // namespace graintune::server
