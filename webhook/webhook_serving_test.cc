// The HTTPS server on loopback with real TLS: routes, caps, and certificate reload.
#include "server/https_server.h"

#include <gtest/gtest.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "workload/in_memory_sources.h"
#include "server/tls_certificates.h"
#include "webhook/webhook_routes.h"

namespace graintune::webhook {
namespace {

using server::GenerateTlsMaterial;
using server::HttpRequest;
using server::HttpResponse;
using server::HttpsServer;
using server::HttpsServerOptions;
using server::TlsMaterial;
using workload::FixedPolicy;
using workload::InMemoryConfigMaps;
using workload::InMemoryHistory;
using workload::MachineTypeTableShapes;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

struct Reply {
  int status = 0;
  std::string body;
  std::string peer_cn;  // subject CN of the certificate the server presented
};

Reply Call(unsigned short port, const std::string& ca_pem, const std::string& method,
           const std::string& target, const std::string& body,
           const std::string& content_type = "application/json") {
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.add_certificate_authority(asio::buffer(ca_pem));
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(stream).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  stream.handshake(asio::ssl::stream_base::client);
  Reply reply;
  X509* cert = SSL_get_peer_certificate(stream.native_handle());
  if (cert) {
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
    reply.peer_cn = cn;
    X509_free(cert);
  }
  http::request<http::string_body> req{method == "POST" ? http::verb::post : http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, content_type);
  req.body() = body;
  req.prepare_payload();
  // A server may answer 413 from the headers and close while the body is still being sent:
  // a failed write is fine as long as the answer can be read.
  beast::error_code write_ec;
  http::write(stream, req, write_ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  beast::error_code ec;
  http::read(stream, buffer, parser, ec);
  if (!ec) {
    reply.status = static_cast<int>(parser.get().result_int());
    reply.body = parser.get().body();
  }
  return reply;
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("graintune-https-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    Result<TlsMaterial> tls = GenerateTlsMaterial({"graintune-webhook.graintune.svc"}, {"127.0.0.1"}, 1);
    ASSERT_TRUE(tls.ok()) << tls.error();
    tls_ = *tls;
    WriteFile(dir_ / "tls.crt", tls_.cert_pem);
    WriteFile(dir_ / "tls.key", tls_.key_pem);
    HttpsServerOptions options;
    options.cert_file = dir_ / "tls.crt";
    options.key_file = dir_ / "tls.key";
    options.max_body_bytes = 64 * 1024;
    options.reload_check_milliseconds = 50;
    server_ = std::make_unique<HttpsServer>(options, [this](const HttpRequest& r) { return routes_.Handle(r); });
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  TlsMaterial tls_;
  MachineTypeTableShapes shapes_;
  InMemoryHistory history_;
  InMemoryConfigMaps configmaps_;
  FixedPolicy policies_;
  Admitter admitter_{PlannerSources{shapes_, history_, configmaps_, policies_}};
  WebhookMetrics metrics_;
  WebhookRoutes routes_{admitter_, metrics_};
  std::unique_ptr<HttpsServer> server_;
};

const char kReview[] = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
  "uid":"abc","kind":{"group":"batch","version":"v1","kind":"Job"},"operation":"CREATE","namespace":"ml",
  "object":{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{
  "nodeSelector":{"node.kubernetes.io/instance-type":"ct6e-standard-4t"},
  "containers":[{"name":"t","command":["python3","-m","MaxText.train","base.yml","grain_worker_count=-1"],
  "resources":{"limits":{"google.com/tpu":"4"}}}]}}}}}})";

TEST_F(HttpsServerTest, ServesMutateHealthAndMetricsOverVerifiedTls) {
  Reply health = Call(server_->port(), tls_.ca_pem, "GET", "/healthz", "");
  EXPECT_EQ(health.status, 200);
  Reply mutate = Call(server_->port(), tls_.ca_pem, "POST", "/mutate", kReview);
  EXPECT_EQ(mutate.status, 200);
  EXPECT_NE(mutate.body.find("\"patchType\":\"JSONPatch\""), std::string::npos) << mutate.body;
  Reply metrics = Call(server_->port(), tls_.ca_pem, "GET", "/metrics", "");
  EXPECT_NE(metrics.body.find("graintune_webhook_requests_total{kind=\"Job\",outcome=\"mutated\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("graintune_webhook_mutations_total 1"), std::string::npos);
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "GET", "/nope", "").status, 404);
}

TEST_F(HttpsServerTest, RejectsWrongContentTypeAndOversizeBodies) {
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "POST", "/mutate", kReview, "text/plain").status, 415);
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "POST", "/mutate", std::string(128 * 1024, 'x')).status, 413);
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "POST", "/mutate", "{bad").status, 400);
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "GET", "/mutate", "").status, 405);
}

TEST_F(HttpsServerTest, ReloadsARotatedCertificateWithoutRestart) {
  EXPECT_EQ(Call(server_->port(), tls_.ca_pem, "GET", "/healthz", "").peer_cn,
            "graintune-webhook.graintune.svc");
  Result<TlsMaterial> next = GenerateTlsMaterial({"rotated.graintune.svc"}, {"127.0.0.1"}, 1);
  ASSERT_TRUE(next.ok());
  // As a Secret volume does: write new files beside, then swap them in.
  WriteFile(dir_ / "tls.key.new", next->key_pem);
  WriteFile(dir_ / "tls.crt.new", next->cert_pem);
  std::filesystem::rename(dir_ / "tls.key.new", dir_ / "tls.key");
  std::filesystem::rename(dir_ / "tls.crt.new", dir_ / "tls.crt");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->reloads() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(server_->reloads(), 1);
  Reply after = Call(server_->port(), next->ca_pem, "GET", "/healthz", "");
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.peer_cn, "rotated.graintune.svc");
}

// Each connection is served by one I/O thread; successive connections go to the threads in turn.
TEST_F(HttpsServerTest, ConnectionsAreDealtToTheIoThreadsInTurn) {
  std::mutex mu;
  std::vector<std::thread::id> served_by;
  HttpsServerOptions options;  // plain HTTP: the dealing does not depend on TLS
  options.threads = 3;
  HttpsServer server(options, [&](const HttpRequest&) {
    std::lock_guard<std::mutex> lock(mu);
    served_by.push_back(std::this_thread::get_id());
    return HttpResponse{200, "text/plain", "ok"};
  });
  ASSERT_TRUE(server.Start().ok());
  auto get = [&] {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()));
    http::request<http::string_body> req{http::verb::get, "/", 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    return res.body();
  };
  for (int i = 0; i < 6; ++i) EXPECT_EQ(get(), "ok");
  ASSERT_EQ(served_by.size(), 6u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(served_by[i], served_by[i + 3]) << "connection " << i;
    for (size_t j = i + 1; j < 3; ++j) EXPECT_NE(served_by[i], served_by[j]) << i << " and " << j;
  }
}

TEST_F(HttpsServerTest, BadCertificateFilesAreAnErrorNotACrash) {
  HttpsServerOptions options;
  options.cert_file = dir_ / "missing.crt";
  options.key_file = dir_ / "missing.key";
  HttpsServer bad(options, [](const HttpRequest&) { return HttpResponse{}; });
  Status s = bad.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("TLS certificate/key"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace graintune::webhook
