#include "server/https_server.h"

#include "base/log.h"
#include "server/connection_budget.h"
#include "server/http_session.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>

namespace graintune::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

using internal::Session;
using internal::SessionAction;
using internal::SessionShared;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::shared_ptr<ssl::context>> LoadContext(const std::string& cert_pem,
                                                  const std::string& key_pem) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx->use_certificate_chain(asio::buffer(cert_pem), ec);
  if (!ec) ctx->use_private_key(asio::buffer(key_pem), ssl::context::pem, ec);
  if (ec) return Status::Error("TLS certificate/key: " + ec.message());
  return ctx;
}

}  // namespace

// One io_context per I/O thread, each run by that thread alone, and connections dealt to them
// in turn: a connection's handlers never cross threads, so no strand and no contended scheduler
// lock. (One io_context shared by two threads cost ~30% more CPU per request here, measured with
// scripts/bench-webhook.sh's pass-through body.) The listener and the certificate reload timer
// live on the first.
struct HttpsServer::Impl {
  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;

  Impl(HttpsServerOptions o, HttpHandler h) : options(std::move(o)), handler(std::move(h)) {}

  const HttpsServerOptions options;
  const HttpHandler handler;
  // Before the I/O contexts: the sessions those still hold when they are destroyed end by
  // closing their connection here.
  ConnectionBudget budget{{.max_connections = options.max_connections,
                           .max_idle_per_source = options.max_idle_per_source,
                           .grace = std::chrono::milliseconds(options.idle_grace_milliseconds)}};
  SessionShared shared{.budget = &budget, .on_shed = options.on_connection_shed};
  std::vector<std::unique_ptr<asio::io_context>> ios = MakeContexts(options.threads);
  std::vector<WorkGuard> idle_guards;  // keep a context with no connection yet running
  asio::io_context& io = *ios.front();
  size_t next_io = 0;  // the context the next connection goes to (touched only on io's thread)
  tcp::acceptor acceptor{io};
  asio::steady_timer reload_timer{io};
  asio::steady_timer sweep_timer{io};  // trims idle and slow connections to their share
  std::vector<std::thread> threads;
  std::mutex mu;
  std::shared_ptr<ssl::context> ctx;  // guarded by mu
  std::string loaded_cert, loaded_key;
  std::atomic<int>* reloads = nullptr;

  // Registers a session before it starts, so the budget can reclaim it and Drain reach it; the
  // session removes itself when it ends.
  template <typename Stream>
  void Track(ConnectionId id, const std::shared_ptr<Session<Stream>>& session) {
    std::weak_ptr<Session<Stream>> weak = session;
    auto executor = session->executor();
    std::lock_guard<std::mutex> lock(shared.sessions_mu);
    shared.sessions[id] = [weak, executor](SessionAction action) {
      asio::post(executor, [weak, action] {
        if (auto s = weak.lock()) action == SessionAction::kReclaim ? s->Reclaim() : s->DrainIfIdle();
      });
    };
  }

  void ScheduleSweep() {
    sweep_timer.expires_after(std::chrono::milliseconds(std::max(50, options.idle_grace_milliseconds / 4)));
    sweep_timer.async_wait([this](beast::error_code ec) {
      if (ec) return;
      for (const Reclaim& r : budget.Sweep(internal::Now())) shared.CloseReclaimed(r);
      ScheduleSweep();
    });
  }

  bool tls() const { return !options.cert_file.empty(); }

  Status Reload() {
    std::string cert = ReadFile(options.cert_file), key = ReadFile(options.key_file);
    if (cert.empty() || key.empty())
      return Status::Error("TLS certificate/key: cannot read " + options.cert_file + " or " +
                           options.key_file);
    if (ctx && cert == loaded_cert && key == loaded_key) return Status::Ok();
    Result<std::shared_ptr<ssl::context>> fresh = LoadContext(cert, key);
    if (!fresh.ok()) return fresh.status();
    std::lock_guard<std::mutex> lock(mu);
    const bool first = !ctx;
    ctx = *fresh;
    loaded_cert = std::move(cert);
    loaded_key = std::move(key);
    if (!first) ++*reloads;
    return Status::Ok();
  }

  void ScheduleReload() {
    reload_timer.expires_after(std::chrono::milliseconds(options.reload_check_milliseconds));
    reload_timer.async_wait([this](beast::error_code ec) {
      if (ec) return;
      if (Status s = Reload(); !s.ok())
        LogLine(LogLevel::kWarning) << "keeping the previous certificate: " << s.message();
      ScheduleReload();
    });
  }

  static std::vector<std::unique_ptr<asio::io_context>> MakeContexts(int threads) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (int i = 0; i < std::max(1, threads); ++i)
      out.push_back(std::make_unique<asio::io_context>(1));  // concurrency hint: one thread
    return out;
  }

  void Accept() {
    asio::io_context& peer = *ios[next_io];
    next_io = (next_io + 1) % ios.size();
    acceptor.async_accept(peer, [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted) Accept();
        return;
      }
      if (shared.draining) {
        beast::error_code ignored;
        socket.close(ignored);
        return;  // the listener is closing
      }
      beast::error_code peer_ec;
      const tcp::endpoint remote = socket.remote_endpoint(peer_ec);
      const std::string source = peer_ec ? std::string("?") : remote.address().to_string();
      const Admission admission = budget.Open(source, internal::Now());
      for (const Reclaim& r : admission.reclaim) shared.CloseReclaimed(r);
      if (!admission.id) {
        shared.CountShed(ShedReason::kRefusedFull);
        beast::error_code ignored;
        socket.close(ignored);
        Accept();
        return;
      }
      Serve(std::move(socket), *admission.id);
      Accept();
    });
  }

  void Serve(tcp::socket socket, ConnectionId id) {
    beast::error_code ignored;  // a peer gone already fails its first read instead
    socket.set_option(tcp::no_delay(true), ignored);
    if (tls()) {
      std::shared_ptr<ssl::context> current;
      {
        std::lock_guard<std::mutex> lock(mu);
        current = ctx;
      }
      using Stream = beast::ssl_stream<beast::tcp_stream>;
      // SSL_new takes its own reference on the SSL_CTX: a later reload cannot pull the
      // context from under an open connection.
      auto session = std::make_shared<Session<Stream>>(
          Stream(beast::tcp_stream(std::move(socket)), *current), handler, options, shared, id);
      Track(id, session);
      session->Start();
    } else {
      auto session = std::make_shared<Session<beast::tcp_stream>>(
          beast::tcp_stream(std::move(socket)), handler, options, shared, id);
      Track(id, session);
      session->Start();
    }
  }
};

HttpsServer::HttpsServer(HttpsServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {
  impl_->reloads = &reloads_;
}

HttpsServer::~HttpsServer() { Stop(); }

int HttpsServer::open_connections() const { return impl_->shared.open.load(); }
long HttpsServer::busy_refusals() const { return impl_->shared.busy_refusals.load(); }
size_t HttpsServer::inflight_body_bytes() const { return impl_->shared.inflight_bytes.load(); }
int HttpsServer::connections_at_work() const { return impl_->budget.at_work(); }
long HttpsServer::shed_connections(ShedReason reason) const {
  return impl_->shared.shed[static_cast<int>(reason)].load();
}

Status HttpsServer::Start() {
  Impl& s = *impl_;
  if (s.tls()) {
    if (Status st = s.Reload(); !st.ok()) return st;
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(s.options.bind_address, ec);
  if (ec) return Status::Error("bind address '" + s.options.bind_address + "': " + ec.message());
  const tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Error("listen on " + s.options.bind_address + ":" +
                               std::to_string(s.options.port) + ": " + ec.message());
  port_ = s.acceptor.local_endpoint().port();
  s.Accept();
  s.ScheduleSweep();
  if (s.tls()) s.ScheduleReload();
  for (auto& io : s.ios) {
    s.idle_guards.push_back(asio::make_work_guard(*io));
    s.threads.emplace_back([context = io.get()] { context->run(); });
  }
  return Status::Ok();
}

bool HttpsServer::Drain(std::chrono::milliseconds grace) {
  if (!impl_ || impl_->threads.empty()) return true;
  Impl& s = *impl_;
  s.shared.draining = true;
  std::promise<void> closed;
  asio::post(s.io, [&s, &closed] {
    boost::system::error_code ec;
    s.acceptor.close(ec);
    closed.set_value();
  });
  closed.get_future().wait();
  {
    std::lock_guard<std::mutex> lock(s.shared.sessions_mu);
    for (const auto& [id, post] : s.shared.sessions) post(SessionAction::kDrainIfIdle);
  }
  std::unique_lock<std::mutex> lock(s.shared.drained_mu);
  const bool drained = s.shared.drained.wait_for(lock, grace, [&s] { return s.shared.open == 0; });
  lock.unlock();
  Stop();
  return drained;
}

void HttpsServer::Stop() {
  if (!impl_ || impl_->threads.empty()) return;
  asio::post(impl_->io, [this] {
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
    impl_->reload_timer.cancel();
    impl_->sweep_timer.cancel();
  });
  impl_->idle_guards.clear();
  for (auto& io : impl_->ios) io->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace graintune::server
