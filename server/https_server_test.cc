// The server's own limits, over plain HTTP on loopback (TLS serving is tested with the webhook's
// routes in webhook/webhook_serving_test.cc).
#include "server/https_server.h"

#include <gtest/gtest.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <thread>

namespace graintune::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

void WaitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "condition not met in 10 s";
    std::this_thread::yield();
  }
}

class ServerLimitsTest : public ::testing::Test {
 protected:
  void StartServer(HttpsServerOptions options) {
    server_ = std::make_unique<HttpsServer>(options, [](const HttpRequest& r) {
      return HttpResponse{200, "text/plain", "ok " + r.target};
    });
    ASSERT_TRUE(server_->Start().ok());
  }
  // A connection to the server; every wait on it ends within 10 s.
  std::unique_ptr<beast::tcp_stream> Connect() {
    auto stream = std::make_unique<beast::tcp_stream>(io_);
    stream->expires_after(10s);
    stream->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    return stream;
  }
  // One keep-alive request; the error of reading the answer (none when it came).
  beast::error_code Ask(beast::tcp_stream& stream, const std::string& target) {
    http::request<http::string_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(true);
    beast::error_code ec;
    stream.expires_after(10s);
    http::write(stream, req, ec);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    if (!ec) http::read(stream, buffer, res, ec);
    if (!ec) {
      EXPECT_EQ(res.body(), "ok " + target);
    }
    return ec;
  }
  asio::io_context io_;
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(ServerLimitsTest, OneConnectionPastTheCeilingIsClosedAtOnce) {
  StartServer({.max_connections = 2});
  auto a = Connect(), b = Connect();
  EXPECT_FALSE(Ask(*a, "/a"));
  EXPECT_FALSE(Ask(*b, "/b"));
  WaitFor([&] { return server_->open_connections() == 2; });
  auto c = Connect();
  EXPECT_TRUE(Ask(*c, "/c"));  // closed by the server, never answered
  EXPECT_EQ(server_->refused_connections(), 1);
  EXPECT_FALSE(Ask(*a, "/a-again"));  // the two open ones are untouched
  a.reset();
  WaitFor([&] { return server_->open_connections() == 1; });
  auto d = Connect();
  EXPECT_FALSE(Ask(*d, "/d"));
}

TEST_F(ServerLimitsTest, AnIdleKeepAliveConnectionIsClosed) {
  StartServer({.idle_timeout_seconds = 1});
  auto a = Connect();
  ASSERT_FALSE(Ask(*a, "/first"));
  // Nothing more is sent: the server closes the connection (a read sees the end of stream,
  // not the client's own 10 s deadline).
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  beast::error_code ec;
  a->expires_after(10s);
  http::read(*a, buffer, res, ec);
  EXPECT_EQ(ec, http::error::end_of_stream) << ec.message();
  WaitFor([&] { return server_->open_connections() == 0; });
}

}  // namespace
}  // namespace graintune::server
