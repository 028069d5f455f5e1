#include "server/https_server.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <fstream>
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

http::response<http::string_body> ToBeast(const HttpResponse& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "graintune");
  res.set(http::field::content_type, r.content_type);
  res.keep_alive(keep_alive);
  res.body() = r.body;
  res.prepare_payload();
  return res;
}

// One connection: (TLS handshake,) then read -> handle -> write until the peer closes.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  // `open` counts the sessions alive; this one is counted from its creation to its end.
  Session(Stream stream, const HttpHandler& handler, const HttpsServerOptions& options,
          std::atomic<int>& open)
      : stream_(std::move(stream)), handler_(handler), options_(options), open_(open) {
    ++open_;
  }
  ~Session() { --open_; }

  void Start() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(options_.read_timeout_seconds));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) self->Read();
                              });
    } else {
      Read();
    }
  }

 private:
  // The first request of a connection may take read_timeout_seconds; each later one must have
  // arrived whole within idle_timeout_seconds of the previous answer (the API server sends a
  // request at once when it has one; an idle keep-alive connection is closed).
  void Read() {
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);
    const int seconds =
        requests_ == 0 ? options_.read_timeout_seconds : options_.idle_timeout_seconds;
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(seconds));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      HttpResponse too_large{413, "application/json",
                             R"({"error":"request body too large"})"};
      Write(ToBeast(too_large, 11, false));
      return;
    }
    if (ec) return Close();
    ++requests_;
    const auto& req = parser_->get();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()),
                        std::string(req[http::field::content_type]), req.body()};
    HttpResponse response;
    try {
      response = handler_(request);
    } catch (const std::exception& e) {
      response = {500, "application/json", std::string(R"({"error":"internal"})")};
    }
    Write(ToBeast(response, req.version(), req.keep_alive()));
  }

  void Write(http::response<http::string_body> res) {
    auto shared = std::make_shared<http::response<http::string_body>>(std::move(res));
    http::async_write(stream_, *shared,
                      [self = this->shared_from_this(), shared](beast::error_code ec, size_t) {
                        if (ec || !shared->keep_alive()) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const HttpHandler& handler_;
  const HttpsServerOptions& options_;
  std::atomic<int>& open_;
  long requests_ = 0;
};

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
  std::vector<std::unique_ptr<asio::io_context>> ios = MakeContexts(options.threads);
  std::vector<WorkGuard> idle_guards;  // keep a context with no connection yet running
  asio::io_context& io = *ios.front();
  size_t next_io = 0;  // the context the next connection goes to (touched only on io's thread)
  tcp::acceptor acceptor{io};
  asio::steady_timer reload_timer{io};
  std::vector<std::thread> threads;
  std::mutex mu;
  std::shared_ptr<ssl::context> ctx;  // guarded by mu
  std::string loaded_cert, loaded_key;
  std::atomic<int>* reloads = nullptr;
  std::atomic<int>* open = nullptr;      // sessions alive
  std::atomic<long>* refused = nullptr;  // closed at accept: max_connections were open

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
        std::cerr << "graintune: keeping the previous certificate: " << s.message() << "\n";
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
      if (*open >= options.max_connections) {
        ++*refused;
        beast::error_code ignored;
        socket.close(ignored);
        Accept();
        return;
      }
      socket.set_option(tcp::no_delay(true));
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
            Stream(beast::tcp_stream(std::move(socket)), *current), handler, options, *open);
        session->Start();
      } else {
        std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), handler,
                                                     options, *open)
            ->Start();
      }
      Accept();
    });
  }
};

HttpsServer::HttpsServer(HttpsServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {
  impl_->reloads = &reloads_;
  impl_->open = &open_connections_;
  impl_->refused = &refused_connections_;
}

HttpsServer::~HttpsServer() {
  Stop();
  impl_.reset();  // its sessions count themselves out in the counters below it
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
  if (s.tls()) s.ScheduleReload();
  for (auto& io : s.ios) {
    s.idle_guards.push_back(asio::make_work_guard(*io));
    s.threads.emplace_back([context = io.get()] { context->run(); });
  }
  return Status::Ok();
}

void HttpsServer::Stop() {
  if (!impl_ || impl_->threads.empty()) return;
  asio::post(impl_->io, [this] {
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
    impl_->reload_timer.cancel();
  });
  impl_->idle_guards.clear();
  for (auto& io : impl_->ios) io->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace graintune::server
