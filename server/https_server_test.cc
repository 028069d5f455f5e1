// The server's own limits, over plain HTTP on loopback (TLS serving is tested with the webhook's
// routes in webhook/webhook_serving_test.cc).
#include "server/https_server.h"

#include <gtest/gtest.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <future>
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
  // Answers "ok TARGET"; a request for /slow waits until release_ is set.
  void StartServer(HttpsServerOptions options) {
    server_ = std::make_unique<HttpsServer>(options, [this](const HttpRequest& r) {
      if (r.target == "/slow") {
        ++slow_started_;
        release_future_.wait();
      }
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
  // Reads until the server closes the connection; the error that ended the read.
  static beast::error_code ReadUntilClosed(beast::tcp_stream& stream) {
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    stream.expires_after(10s);
    http::read(stream, buffer, res, ec);
    return ec;
  }
  static void Send(beast::tcp_stream& stream, const std::string& bytes) {
    stream.expires_after(10s);
    asio::write(stream, asio::buffer(bytes));
  }
  void TearDown() override {
    release_.set_value();
  }

  asio::io_context io_;
  std::promise<void> release_;
  std::shared_future<void> release_future_ = release_.get_future().share();
  std::atomic<int> slow_started_{0};
  std::unique_ptr<HttpsServer> server_;
};

// Past the ceiling, a new connection is closed at accept only while every open one carries a
// request; otherwise it takes the slot of the oldest idle one, and the requests in flight are
// answered untouched.
TEST_F(ServerLimitsTest, PastTheCeilingIdleConnectionsMakeRoomAndWorkIsNeverShed) {
  StartServer({.max_connections = 2, .idle_grace_milliseconds = 60000});
  auto a = Connect(), b = Connect();
  Send(*a, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab");
  Send(*b, "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab");
  WaitFor([&] { return server_->inflight_body_bytes() == 8; });  // both headers read
  auto c = Connect();
  EXPECT_TRUE(ReadUntilClosed(*c));  // closed by the server, never answered
  EXPECT_EQ(server_->refused_connections(), 1);
  for (auto* stream : {a.get(), b.get()}) {
    Send(*stream, "cd");
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    stream->expires_after(10s);
    http::read(*stream, buffer, res);
    EXPECT_EQ(res.body(), stream == a.get() ? "ok /a" : "ok /b");
    // Answered and waiting again (a before b) once the server has seen the write through.
    WaitFor([&] { return server_->connections_at_work() == (stream == a.get() ? 1 : 0); });
  }
  // Both are idle now (a first): the next connection takes a's slot, a is closed.
  auto d = Connect();
  EXPECT_FALSE(Ask(*d, "/d"));
  EXPECT_TRUE(ReadUntilClosed(*a));
  EXPECT_EQ(server_->shed_connections(ShedReason::kForRoom), 1);
  EXPECT_FALSE(Ask(*b, "/b-again"));
  EXPECT_EQ(server_->refused_connections(), 1);
}

// One address keeps at most its share of idle connections: past it, its oldest idle ones are
// closed once they have waited the grace; the newest stay and are served.
TEST_F(ServerLimitsTest, IdleConnectionsPastTheSharePerAddressAreClosedOldestFirst) {
  StartServer({.max_idle_per_source = 2, .idle_grace_milliseconds = 100});
  std::vector<std::unique_ptr<beast::tcp_stream>> streams;
  for (int i = 0; i < 5; ++i) {
    streams.push_back(Connect());
    ASSERT_FALSE(Ask(*streams.back(), "/" + std::to_string(i)));
  }
  WaitFor([&] { return server_->shed_connections(ShedReason::kIdleOverShare) == 3; });
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(ReadUntilClosed(*streams[i])) << i;
  for (int i = 3; i < 5; ++i) EXPECT_FALSE(Ask(*streams[i], "/again")) << i;
  EXPECT_EQ(server_->refused_connections(), 0);
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

// A client that connects and sends half a header is cut at the header deadline, not the
// (longer) body deadline.
TEST_F(ServerLimitsTest, AHeaderThatNeverEndsIsCut) {
  StartServer({.header_timeout_seconds = 1, .read_timeout_seconds = 60});
  auto a = Connect();
  Send(*a, "GET /never HTTP/1.1\r\nHost: x\r\n");
  const beast::error_code ec = ReadUntilClosed(*a);
  EXPECT_TRUE(ec == http::error::end_of_stream || ec == asio::error::connection_reset) << ec.message();
  WaitFor([&] { return server_->open_connections() == 0; });
}

// Bodies in flight share one budget: while one request holds 80 of 100 bytes, another of 50 is
// answered 503 with Retry-After; once the first is answered the second goes through.
TEST_F(ServerLimitsTest, BodiesInFlightShareOneBudget) {
  StartServer({.max_body_bytes = 1000, .max_inflight_body_bytes = 100});
  auto a = Connect();
  Send(*a, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 80\r\n\r\n" + std::string(40, 'x'));
  WaitFor([&] { return server_->inflight_body_bytes() == 80; });
  auto post = [](const std::string& target) {
    return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n" + std::string(50, 'y');
  };
  auto b = Connect();
  Send(*b, post("/b"));
  beast::flat_buffer buffer;
  http::response<http::string_body> busy;
  http::read(*b, buffer, busy);
  EXPECT_EQ(busy.result_int(), 503);
  EXPECT_EQ(busy[http::field::retry_after], "1");
  EXPECT_EQ(server_->busy_refusals(), 1);
  Send(*a, std::string(40, 'x'));  // the rest of a's body
  http::response<http::string_body> answered;
  http::read(*a, buffer, answered);
  EXPECT_EQ(answered.body(), "ok /a");
  WaitFor([&] { return server_->inflight_body_bytes() == 0; });
  auto c = Connect();
  Send(*c, post("/c"));
  http::response<http::string_body> retried;
  http::read(*c, buffer, retried);
  EXPECT_EQ(retried.body(), "ok /c");
}

// Drain: the listener closes, an idle keep-alive connection is closed, a request in progress
// is answered (with Connection: close), and Drain reports that everything ended.
TEST_F(ServerLimitsTest, DrainAnswersWhatIsInProgressAndClosesTheRest) {
  StartServer({});
  auto idle = Connect();
  ASSERT_FALSE(Ask(*idle, "/first"));
  auto busy = Connect();
  http::request<http::string_body> req{http::verb::get, "/slow", 11};
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(true);
  busy->expires_after(10s);
  http::write(*busy, req);
  WaitFor([&] { return slow_started_ == 1; });
  const unsigned short port = server_->port();
  auto drained = std::async(std::launch::async, [&] { return server_->Drain(10s); });
  const beast::error_code idle_end = ReadUntilClosed(*idle);
  EXPECT_TRUE(idle_end == http::error::end_of_stream || idle_end == asio::error::connection_reset)
      << idle_end.message();
  // No new connection is taken.
  tcp::socket late(io_);
  beast::error_code connect_error;
  late.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), connect_error);
  if (!connect_error) {  // accepted by the kernel's backlog before the close: never answered
    beast::tcp_stream late_stream(std::move(late));
    EXPECT_TRUE(Ask(late_stream, "/late"));
  }
  release_.set_value();
  release_ = std::promise<void>();  // TearDown's set_value goes to a fresh promise
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(*busy, buffer, res);
  EXPECT_EQ(res.body(), "ok /slow");
  EXPECT_FALSE(res.keep_alive());
  EXPECT_TRUE(drained.get());
  EXPECT_EQ(server_->open_connections(), 0);
}

}  // namespace
}  // namespace graintune::server
