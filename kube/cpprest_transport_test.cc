// The cpprestsdk transport against a loopback HTTP/1.1 server that forgets its kept-alive
// connections, as an API server does when it restarts: the next request must still get through,
// with its whole body. Also what must not be resent (a write that timed out) and a server URL
// the library cannot parse.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/http_transport.h"

namespace graintune::kube {
namespace {

// How the server drops its connections: a reset (what a client that writes next gets from a
// dead server's host), or an orderly close (FIN: the client's first write still succeeds).
enum class Drop { kReset, kClose };

// A listening socket on a free loopback port; -1 when there is none.
int Listen(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 8) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

// Answers each whole request (headers and Content-Length body) with 201 and keeps the
// connection open for the next. Forget() drops every connection it holds and returns once they
// are all closed.
class ForgetfulServer {
 public:
  ForgetfulServer() {
    listener_ = Listen(&port_);
    EXPECT_GE(listener_, 0);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~ForgetfulServer() {
    shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    close(listener_);
    Forget(Drop::kReset);
    for (std::thread& t : serving_) t.join();
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> Bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

  void Forget(Drop how) {
    std::unique_lock<std::mutex> lock(mu_);
    for (int fd : open_) {
      if (how == Drop::kReset) {
        linger l{1, 0};  // the close that follows sends RST
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        shutdown(fd, SHUT_RD);  // wakes Serve(); nothing goes out until its close
      } else {
        shutdown(fd, SHUT_RDWR);
      }
    }
    closed_.wait(lock, [this] { return open_.empty(); });
  }

 private:
  void AcceptLoop() {
    while (true) {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard<std::mutex> lock(mu_);
      open_.insert(fd);
      serving_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // The Content-Length of a request head (header names are case-insensitive, the value may
  // follow optional whitespace); 0 without one.
  static size_t ContentLength(std::string head) {
    std::transform(head.begin(), head.end(), head.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const size_t at = head.find("\r\ncontent-length:");
    if (at == std::string::npos) return 0;
    size_t i = at + 17;
    while (i < head.size() && head[i] == ' ') ++i;
    return std::stoul(head.substr(i));
  }

  void Serve(int fd) {
    std::string in;
    char buf[64 * 1024];
    while (true) {
      const size_t head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t body = ContentLength(in.substr(0, head_end));
        if (in.size() >= head_end + 4 + body) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            bodies_.push_back(in.substr(head_end + 4, body));
          }
          in.erase(0, head_end + 4 + body);
          const std::string out = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                                  "Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}";
          if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) break;
          continue;
        }
      }
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(fd);  // before close: the number may be reused at once
    close(fd);
    closed_.notify_all();
  }

  int listener_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable closed_;
  std::set<int> open_;
  std::vector<std::thread> serving_;
  std::vector<std::string> bodies_;
};

// Takes connections and never reads from them: a client's write stalls once the socket buffers
// are full.
class DeafServer {
 public:
  DeafServer() {
    listener_ = Listen(&port_);
    EXPECT_GE(listener_, 0);
    acceptor_ = std::thread([this] {
      for (int fd; (fd = accept(listener_, nullptr, nullptr)) >= 0;) {
        std::lock_guard<std::mutex> lock(mu_);
        held_.push_back(fd);
      }
    });
  }
  ~DeafServer() {
    shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    close(listener_);
    for (int fd : held_) close(fd);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  size_t Connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> held_;
};

std::shared_ptr<HttpTransport> TransportTo(const std::string& url) {
  ClientConfig config;
  config.server = url;
  config.allow_plain_http = true;
  ApiResult<std::shared_ptr<HttpTransport>> transport = NewCpprestTransport(config);
  EXPECT_TRUE(transport.ok()) << transport.error().ToString();
  return transport.ok() ? *transport : nullptr;
}

HttpRequest Request(const std::string& method, int i) {
  HttpRequest r;
  r.method = method;
  r.path_and_query = "/api/v1/namespaces/ns/configmaps/cm-" + std::to_string(i);
  r.body = R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("},"data":{"v":")" +
           std::string(2048, 'x') + R"("}})";
  r.content_type = "application/json";
  r.timeout = std::chrono::seconds(10);
  return r;
}

// Each request after the server dropped the connection the one before used gets through, and
// the server reads every body whole, once.
void ExpectEveryRequestThroughAfterEachDrop(Drop how) {
  ForgetfulServer server;
  std::shared_ptr<HttpTransport> transport = TransportTo(server.Url());
  ASSERT_NE(transport, nullptr);
  std::vector<std::string> sent;
  int i = 0;
  for (const char* method : {"POST", "PUT", "PATCH", "GET", "POST", "DELETE"}) {
    HttpRequest r = Request(method, i++);
    ApiResult<HttpResponse> answer = transport->Send(r, {});
    ASSERT_TRUE(answer.ok()) << method << " " << r.path_and_query << ": " << answer.error().ToString();
    EXPECT_EQ(answer->status, 201);
    sent.push_back(r.body);
    server.Forget(how);
  }
  EXPECT_EQ(server.Bodies(), sent);
}

TEST(CpprestTransportTest, EveryMethodGetsThroughAfterTheServerResetItsConnection) {
  ExpectEveryRequestThroughAfterEachDrop(Drop::kReset);
}

TEST(CpprestTransportTest, EveryMethodGetsThroughAfterTheServerClosedItsConnection) {
  ExpectEveryRequestThroughAfterEachDrop(Drop::kClose);
}

// A server that takes the connection and never reads: the body's write runs out of time. That
// is a Timeout, on the one connection; sending it again would double the caller's wait.
TEST(CpprestTransportTest, AWriteThatTimedOutIsNotSentAgain) {
  DeafServer server;
  std::shared_ptr<HttpTransport> transport = TransportTo(server.Url());
  ASSERT_NE(transport, nullptr);
  HttpRequest r = Request("POST", 0);
  r.body.assign(32u << 20, 'x');  // far more than loopback's socket buffers hold
  r.timeout = std::chrono::seconds(1);
  ApiResult<HttpResponse> answer = transport->Send(r, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().reason, "Timeout") << answer.error().ToString();
  EXPECT_EQ(server.Connections(), 1u);
}

TEST(CpprestTransportTest, AServerUrlTheLibraryCannotParseIsAnErrorNotAnException) {
  for (const char* url : {"http://", "http://prom:90x0", "http://[::1"}) {
    std::shared_ptr<HttpTransport> transport = TransportTo(url);
    if (!transport) continue;  // refused up front: as good
    ApiResult<HttpResponse> answer = transport->Send(Request("GET", 0), {});
    ASSERT_FALSE(answer.ok()) << url;
    EXPECT_EQ(answer.error().code, 0) << url;
  }
}

}  // namespace
}  // namespace graintune::kube
