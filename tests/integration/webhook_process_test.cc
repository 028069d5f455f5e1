// graintune-webhook as a process, standalone (no API server): its probe port, and what SIGTERM
// does: unready at once, admissions still answered during --shutdown-delay, then a drain and
// exit status 0 within the grace period.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "server/tls_certificates.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/https_call.h"
#include "tests/controlplane/wait_for.h"

namespace graintune {
namespace {

using namespace std::chrono_literals;

const char kReview[] = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
  "uid":"u1","kind":{"group":"batch","version":"v1","kind":"Job"},"operation":"CREATE","namespace":"ml",
  "object":{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{
  "nodeSelector":{"node.kubernetes.io/instance-type":"ct6e-standard-4t"},
  "containers":[{"name":"t","command":["python3","-m","MaxText.train","base.yml","grain_worker_count=-1"],
  "resources":{"limits":{"google.com/tpu":"4"}}}]}}}}}})";

class WebhookProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("graintune-webhook-process-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    Result<server::TlsMaterial> tls = server::GenerateTlsMaterial({"localhost"}, {"127.0.0.1"}, 1);
    ASSERT_TRUE(tls.ok()) << tls.error();
    ca_ = tls->ca_pem;
    ASSERT_TRUE(testing::WriteFile(dir_ / "tls.crt", tls->cert_pem).ok());
    ASSERT_TRUE(testing::WriteFile(dir_ / "tls.key", tls->key_pem).ok());
    Result<int> port = testing::FreeLoopbackPort(), probe = testing::FreeLoopbackPort();
    ASSERT_TRUE(port.ok() && probe.ok());
    port_ = *port;
    probe_port_ = *probe;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Start(const std::vector<std::string>& extra, const std::string& log = "webhook.log") {
    std::vector<std::string> argv = {GRAINTUNE_WEBHOOK_BIN, "--standalone", "--no-exporter",
                                     "--tls-cert-file", dir_ / "tls.crt", "--tls-key-file",
                                     dir_ / "tls.key", "--bind-address", "127.0.0.1", "--port",
                                     std::to_string(port_), "--health-port",
                                     std::to_string(probe_port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result<testing::ChildProcess> p = testing::ChildProcess::Spawn(argv, dir_ / log);
    ASSERT_TRUE(p.ok()) << p.error();
    webhook_ = std::move(p).value();
    ASSERT_TRUE(testing::WaitFor([&] { return testing::HttpsCall(probe_port_, "", "/healthz").status == 200; }, 30s))
        << testing::TailOfFile(webhook_.log_path());
  }

  std::filesystem::path dir_;
  std::string ca_;
  int port_ = 0, probe_port_ = 0;
  testing::ChildProcess webhook_;
};

TEST_F(WebhookProcessTest, TheProbePortAnswersProbesAndMetricsAndNothingElse) {
  Start({"--shutdown-delay", "0"});
  EXPECT_EQ(testing::HttpsCall(probe_port_, "", "/readyz").status, 200);
  testing::HttpsAnswer metrics = testing::HttpsCall(probe_port_, "", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("graintune_webhook_mutations_total"), std::string::npos);
  EXPECT_EQ(testing::HttpsCall(probe_port_, "", "/mutate", kReview).status, 404);  // admissions are TLS only
  testing::HttpsAnswer mutated = testing::HttpsCall(port_, ca_, "/mutate", kReview);
  EXPECT_EQ(mutated.status, 200);
  EXPECT_NE(mutated.body.find("\"patch\""), std::string::npos) << mutated.body;
  // The admission port keeps its own probes for clients that use it.
  EXPECT_EQ(testing::HttpsCall(port_, ca_, "/healthz").status, 200);
}

TEST_F(WebhookProcessTest, SigtermTurnsUnreadyKeepsAnsweringThenDrainsAndExitsZero) {
  Start({"--shutdown-delay", "3s", "--shutdown-grace", "5s"});
  ASSERT_EQ(::kill(webhook_.pid(), SIGTERM), 0);
  ASSERT_TRUE(testing::WaitFor([&] { return testing::HttpsCall(probe_port_, "", "/readyz").status == 503; }, 10s));
  // Unready, but still serving admissions until the delay is over.
  EXPECT_EQ(testing::HttpsCall(port_, ca_, "/mutate", kReview).status, 200);
  ASSERT_TRUE(testing::WaitFor([&] { return !webhook_.Running(); }, 30s))
      << testing::TailOfFile(webhook_.log_path());
  EXPECT_EQ(webhook_.exit_status(), 0);
  EXPECT_NE(testing::TailOfFile(webhook_.log_path()).find("drained"), std::string::npos);
}

// Resident memory of a process, from /proc; 0 when it cannot be read.
double RssBytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  return 0;
}

// One address floods the webhook with idle TLS connections (the handshake done, no request), as
// any pod in the cluster could: it gets its share (--max-connections-per-source, 64) and no
// more, another address is still served at once, and the idle ones are closed after the first
// request's deadline (--header-timeout).
TEST_F(WebhookProcessTest, AFloodOfIdleConnectionsFromOneAddressLocksNoOtherOut) {
  // Room for 1,500 client sockets here and 1,024 connections in the webhook (a pod's limit is
  // far higher than a login shell's 1,024): the soft limit raised to the hard one, inherited.
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 8192);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GE(files.rlim_cur, 4096u) << "the test needs 4,096 open files";
  Start({"--shutdown-delay", "0"});
  namespace asio = boost::asio;
  using tcp = asio::ip::tcp;
  const double rss_before = RssBytes(webhook_.pid());
  asio::io_context io;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.set_verify_mode(asio::ssl::verify_none);
  using TlsStream = asio::ssl::stream<tcp::socket>;
  std::vector<std::unique_ptr<TlsStream>> idle;
  // One idle TLS connection from `address` (handshake done, no request), kept in `idle`; false
  // when the webhook closed it at accept.
  auto open_idle = [&](const std::string& address) {
    auto stream = std::make_unique<TlsStream>(io, tls);
    boost::system::error_code ec;
    tcp::socket& socket = stream->next_layer();
    socket.open(tcp::v4(), ec);
    if (!ec) socket.bind(tcp::endpoint(asio::ip::make_address(address), 0), ec);
    if (!ec) socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
    if (!ec) stream->handshake(asio::ssl::stream_base::client, ec);
    if (ec) return false;
    idle.push_back(std::move(stream));
    return true;
  };
  int refused = 0;
  const auto flood_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1500; ++i) refused += !open_idle("127.0.0.7");
  const double flood_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - flood_start).count();
  const double rss_flooded = RssBytes(webhook_.pid());
  // Another address, while the flood holds its connections.
  const auto ask = std::chrono::steady_clock::now();
  testing::HttpsAnswer answer = testing::HttpsCall(port_, ca_, "/mutate", kReview);
  const double served_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ask).count();
  std::printf("flood from 127.0.0.7: %zu idle TLS connections held, %d closed at accept (%.1f s); "
              "127.0.0.1 served in %.3f s; webhook RSS %.0f MB before, %.0f MB flooded\n",
              idle.size(), refused, flood_seconds, served_seconds, rss_before / 1e6, rss_flooded / 1e6);
  EXPECT_EQ(answer.status, 200) << answer.error;
  EXPECT_LT(served_seconds, 2.0);
  EXPECT_EQ(idle.size(), 64u) << "one address holds its share and no more";
  // The whole budget, from crowding addresses (64 each, then 8 each in the reserved slots):
  // the webhook's memory at its connection ceiling.
  for (int a = 0; a < 40 && idle.size() < 1024; ++a)
    for (int i = 0; i < 64 && open_idle("127.0.1." + std::to_string(a + 1)); ++i) {
    }
  const double rss_full = RssBytes(webhook_.pid());
  std::printf("the whole budget held (%zu idle TLS connections from %s): webhook RSS %.0f MB (chart limit 256Mi)\n",
              idle.size(), "127.0.0.7 and 127.0.1.x", rss_full / 1e6);
  EXPECT_EQ(idle.size(), 1024u);
  EXPECT_LT(rss_full, 256.0 * (1 << 20));
  // The idle connections are closed by the webhook once the first request's deadline passes.
  ASSERT_FALSE(idle.empty());
  TlsStream& first = *idle.front();
  first.next_layer().non_blocking(false);
  timeval wait{12, 0};
  ::setsockopt(first.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  const auto idle_start = std::chrono::steady_clock::now();
  char byte;
  boost::system::error_code read_ec;
  asio::read(first, asio::buffer(&byte, 1), read_ec);
  const double closed_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - idle_start).count();
  std::printf("an idle flood connection was closed %.1f s after the flood\n", closed_after);
  EXPECT_TRUE(read_ec == asio::error::eof || read_ec == asio::ssl::error::stream_truncated ||
              read_ec == asio::error::connection_reset)
      << read_ec.message();
  EXPECT_LT(closed_after, 11.0);
}

// Flags out of range are usage errors (exit 2) that name the flag, not silent defaults.
TEST_F(WebhookProcessTest, LimitFlagsAreValidated) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--max-connections", "0"}, {"--header-timeout", "0"},
        {"--max-request-ms", "x"}, {"--max-inflight-body-mib", "1"}, {"--log-level", "loud"},
        {"--exporter-memory-limit", "1Mi"}}) {
    std::vector<std::string> argv = {GRAINTUNE_WEBHOOK_BIN, "--standalone", "--tls-cert-file",
                                     dir_ / "tls.crt", "--tls-key-file", dir_ / "tls.key"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    Result<testing::ChildProcess> p = testing::ChildProcess::Spawn(argv, dir_ / "bad.log");
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(testing::WaitFor([&] { return !p->Running(); }, 10s)) << bad[0];
    EXPECT_EQ(p->exit_status(), 2) << bad[0];
    EXPECT_NE(testing::TailOfFile(dir_ / "bad.log").find(bad[0]), std::string::npos) << bad[0];
  }
}

// The log level gates what is written: lifecycle at info, a line per admission at debug only.
TEST_F(WebhookProcessTest, DebugLogsEachAdmissionInfoDoesNot) {
  Start({"--shutdown-delay", "0", "--log-level", "debug"});
  ASSERT_EQ(testing::HttpsCall(port_, ca_, "/mutate", kReview).status, 200);
  ASSERT_TRUE(testing::WaitFor([&] {
    return testing::TailOfFile(webhook_.log_path()).find("debug graintune-webhook: admission Job: mutated")
           != std::string::npos;
  }, 10s)) << testing::TailOfFile(webhook_.log_path());
  EXPECT_NE(testing::TailOfFile(webhook_.log_path()).find("info graintune-webhook: serving on 127.0.0.1:"),
            std::string::npos);
  webhook_.Stop();

  Start({"--shutdown-delay", "0", "--log-level", "info"}, "webhook-info.log");
  ASSERT_EQ(testing::HttpsCall(port_, ca_, "/mutate", kReview).status, 200);
  webhook_.Stop();  // its log is complete once it has exited
  const std::string log = testing::TailOfFile(webhook_.log_path());
  EXPECT_EQ(log.find("admission"), std::string::npos) << log;
  EXPECT_NE(log.find("info graintune-webhook: serving on"), std::string::npos) << log;
}

}  // namespace
}  // namespace graintune
