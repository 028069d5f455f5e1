// The cpprestsdk transport against a loopback HTTP/1.1 server that forgets its kept-alive
// connections, as an API server does when it restarts: the next request must reach the new
// one, once, whatever its method.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/http_transport.h"

namespace graintune::kube {
namespace {

// Answers each complete request with 201 and keeps the connection open for the next, until
// Forget() closes every connection it holds, by reset (`reset`) or by an orderly close.
class ForgetfulServer {
 public:
  ForgetfulServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listener_, 8), 0);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~ForgetfulServer() {
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    acceptor_.join();
    Forget(true);
    for (std::thread& t : serving_) t.join();
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int CompleteRequests() const { return complete_.load(); }

  void Forget(bool reset) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_) {
      if (reset) {
        linger l{1, 0};  // close() sends RST
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      }
      shutdown(fd, SHUT_RDWR);
    }
    open_.clear();
  }

 private:
  void AcceptLoop() {
    while (true) {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard<std::mutex> lock(mu_);
      open_.push_back(fd);
      serving_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Reads requests with a Content-Length body; answers each once it is whole.
  void Serve(int fd) {
    std::string in;
    char buf[4096];
    while (true) {
      const size_t head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t body = 0;
        const size_t cl = in.find("Content-Length: ");
        if (cl != std::string::npos && cl < head_end) body = std::stoul(in.substr(cl + 16));
        if (in.size() >= head_end + 4 + body) {
          in.erase(0, head_end + 4 + body);
          ++complete_;
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
    close(fd);
  }

  int listener_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> serving_;
  std::atomic<int> complete_{0};
};

HttpRequest Post(int i) {
  HttpRequest r;
  r.method = "POST";
  r.path_and_query = "/api/v1/namespaces/ns/configmaps";
  r.body = R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("},"data":{"v":")" +
           std::string(2048, 'x') + R"("}})";
  r.content_type = "application/json";
  r.timeout = std::chrono::seconds(10);
  return r;
}

void ExpectEachRequestArrivesOnceAcrossForgottenConnections(bool reset) {
  ForgetfulServer server;
  ClientConfig config;
  config.server = server.Url();
  config.allow_plain_http = true;
  ApiResult<std::shared_ptr<HttpTransport>> transport = NewCpprestTransport(config);
  ASSERT_TRUE(transport.ok()) << transport.error().ToString();
  constexpr int kRounds = 5;
  for (int i = 0; i < kRounds; ++i) {
    ApiResult<HttpResponse> r = (*transport)->Send(Post(i), {});
    ASSERT_TRUE(r.ok()) << "request " << i << ": " << r.error().ToString();
    EXPECT_EQ(r->status, 201);
    EXPECT_EQ(server.CompleteRequests(), i + 1) << "request " << i << " arrived more than once";
    server.Forget(reset);
  }
}

TEST(CpprestTransportTest, APostAfterTheServerResetItsConnectionsReachesItOnce) {
  ExpectEachRequestArrivesOnceAcrossForgottenConnections(true);
}

TEST(CpprestTransportTest, APostAfterTheServerClosedItsConnectionsReachesItOnce) {
  ExpectEachRequestArrivesOnceAcrossForgottenConnections(false);
}

}  // namespace
}  // namespace graintune::kube
