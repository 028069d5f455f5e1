// The sessions of HttpsServer (https_server.h), one per connection: (TLS handshake,) read a
// request header, reserve its body's bytes from the server's in-flight budget, read the body,
// answer through the handler, and again on keep-alive, each step under its deadline. Each step
// is told to the connection budget (server/connection_budget.h), which may reclaim the session
// while it is opening, waiting for a request, or reading a slow body; never while answering.
// Internal to graintune_server: include it from https_server.cc only.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/connection_budget.h"
#include "server/https_server.h"

namespace graintune::server::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

inline http::response<http::string_body> ToBeast(const HttpResponse& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "graintune");
  res.set(http::field::content_type, r.content_type);
  res.keep_alive(keep_alive);
  res.body() = r.body;
  res.prepare_payload();
  return res;
}

// What the server asks of a session, on the session's own I/O thread.
enum class SessionAction { kReclaim, kDrainIfIdle };

// Shared by the sessions of one server: the request-body bytes reserved by requests being
// read or answered, the connection budget and the sessions it may reclaim, and whether the
// server is draining.
struct SessionShared {
  std::atomic<int> open{0};                // sessions alive
  std::atomic<size_t> inflight_bytes{0};   // reserved by requests in progress
  std::atomic<long> busy_refusals{0};      // answered 503: the in-flight budget was spent
  std::atomic<bool> draining{false};
  ConnectionBudget* budget = nullptr;      // admitted each session's connection
  std::function<void(ShedReason)> on_shed;  // from HttpsServerOptions (may be empty)
  std::array<std::atomic<long>, kShedReasons> shed{};
  std::mutex drained_mu;  // with drained: the last session's end while draining is signalled
  std::condition_variable drained;
  // Each live session, by its connection id: posts an action to the session's I/O thread.
  std::mutex sessions_mu;
  std::unordered_map<ConnectionId, std::function<void(SessionAction)>> sessions;  // sessions_mu

  void CountShed(ShedReason reason) {
    ++shed[static_cast<int>(reason)];
    if (on_shed) on_shed(reason);
  }
  // Closes a connection the budget reclaimed (nothing when it has ended already).
  void CloseReclaimed(const Reclaim& r) {
    CountShed(r.reason);
    std::function<void(SessionAction)> post;
    {
      std::lock_guard<std::mutex> lock(sessions_mu);
      auto it = sessions.find(r.id);
      if (it == sessions.end()) return;
      post = it->second;
    }
    post(SessionAction::kReclaim);
  }
};

inline SteadyTime Now() { return std::chrono::steady_clock::now(); }

// One connection: (TLS handshake,) then read header -> read body -> handle -> write, until the
// peer closes, a deadline passes or the server drains.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  // `id`: the connection as shared.budget admitted it (closed there at the end).
  Session(Stream stream, const HttpHandler& handler, const HttpsServerOptions& options,
          SessionShared& shared, ConnectionId id)
      : stream_(std::move(stream)), handler_(handler), options_(options), shared_(shared), id_(id) {
    ++shared_.open;
  }
  ~Session() {
    Release();
    shared_.budget->Close(id_);
    {
      std::lock_guard<std::mutex> lock(shared_.sessions_mu);
      shared_.sessions.erase(id_);
    }
    if (--shared_.open == 0 && shared_.draining) {
      std::lock_guard<std::mutex> lock(shared_.drained_mu);
      shared_.drained.notify_all();
    }
  }

  auto executor() { return stream_.get_executor(); }

  void Start() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(
          std::chrono::seconds(options_.header_timeout_seconds));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return;
                                self->shared_.budget->Ready(self->id_, Now());
                                self->ReadHeader();
                              });
    } else {
      shared_.budget->Ready(id_, Now());
      ReadHeader();
    }
  }

  // Called on this session's I/O thread once the budget reclaimed the connection (it was
  // opening, waiting for a request, or reading a slow body, and can no longer start one).
  void Reclaim() { Close(); }

  // Called on this session's I/O thread when the server starts draining: a connection waiting
  // for a request that has not begun is closed; one in a request finishes it first.
  void DrainIfIdle() {
    if (waiting_for_header_ && parser_ && !parser_->got_some() && buffer_.size() == 0) Close();
  }

 private:
  // The first request's header (TLS handshake included) must arrive within
  // header_timeout_seconds; each later one within idle_timeout_seconds of the previous answer
  // (the API server sends a request at once when it has one; an idle keep-alive connection is
  // closed). The body then has read_timeout_seconds.
  void ReadHeader() {
    if (shared_.draining) return Close();
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);
    const int seconds =
        requests_ == 0 ? options_.header_timeout_seconds : options_.idle_timeout_seconds;
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(seconds));
    waiting_for_header_ = true;
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              self->waiting_for_header_ = false;
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec == http::error::body_limit) return TooLarge();
    if (ec) return Close();
    if (!shared_.budget->RequestStarted(id_, Now())) return Close();  // reclaimed just before
    // Reserve the body's bytes (all of max_body_bytes when its length is not announced) from
    // the server's in-flight budget: bodies being read and answered never hold more than
    // max_inflight_body_bytes, however many connections send them.
    const auto length = parser_->content_length();
    reserved_ = length ? std::min<size_t>(*length, options_.max_body_bytes) : options_.max_body_bytes;
    if (parser_->is_done()) {
      reserved_ = 0;  // no body
    } else {
      size_t now = shared_.inflight_bytes.load();
      do {
        if (now + reserved_ > options_.max_inflight_body_bytes) {
          reserved_ = 0;
          ++shared_.busy_refusals;
          HttpResponse busy{503, "application/json", R"({"error":"server busy, retry"})"};
          auto res = ToBeast(busy, 11, false);
          res.set(http::field::retry_after, "1");
          return Write(std::move(res));
        }
      } while (!shared_.inflight_bytes.compare_exchange_weak(now, now + reserved_));
    }
    beast::get_lowest_layer(stream_).expires_after(
        std::chrono::seconds(options_.read_timeout_seconds));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code read_ec, size_t) {
                       self->OnRead(read_ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) return TooLarge();
    if (ec) return Close();
    if (!shared_.budget->BodyRead(id_)) return Close();  // reclaimed as slow
    ++requests_;
    auto& req = parser_->get();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()),
                        std::string(req[http::field::content_type]), std::move(req.body())};
    HttpResponse response;
    try {
      response = handler_(request);
    } catch (const std::exception& e) {
      response = {500, "application/json", std::string(R"({"error":"internal"})")};
    }
    request = {};
    Release();
    // While draining, this answer is the connection's last.
    Write(ToBeast(response, req.version(), req.keep_alive() && !shared_.draining));
  }

  void TooLarge() {
    HttpResponse too_large{413, "application/json", R"({"error":"request body too large"})"};
    Write(ToBeast(too_large, 11, false));
  }

  void Write(http::response<http::string_body> res) {
    auto shared = std::make_shared<http::response<http::string_body>>(std::move(res));
    http::async_write(stream_, *shared,
                      [self = this->shared_from_this(), shared](beast::error_code ec, size_t) {
                        self->Release();
                        if (ec || !shared->keep_alive()) return self->Close();
                        self->shared_.budget->Answered(self->id_, Now());
                        self->ReadHeader();
                      });
  }

  void Release() {
    if (reserved_ > 0) shared_.inflight_bytes -= reserved_;
    reserved_ = 0;
  }

  void Close() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(stream_).cancel();
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const HttpHandler& handler_;
  const HttpsServerOptions& options_;
  SessionShared& shared_;
  const ConnectionId id_;
  long requests_ = 0;
  size_t reserved_ = 0;
  bool waiting_for_header_ = false;
};

}  // namespace graintune::server::internal
