// graintune-webhook as a process, standalone (no API server): its probe port, what SIGTERM
// does (unready at once, admissions still answered during --shutdown-delay, then a drain and
// exit status 0 within the grace period), and its connections under floods and bursts.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

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

// The chart's memory limit for the webhook (charts/graintune/values.yaml: 256Mi).
constexpr double kChartMemoryLimit = 256.0 * (1 << 20);

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<tcp::socket>;

// Idle TLS connections to the webhook (handshake done, no request), as any pod in the cluster
// could open, held until this object goes.
class IdleConnections {
 public:
  explicit IdleConnections(int port) : port_(port) { tls_.set_verify_mode(asio::ssl::verify_none); }

  // One more from `address`; false when the webhook closed it before the handshake ended.
  bool Open(const std::string& address) {
    auto stream = std::make_unique<TlsStream>(io_, tls_);
    boost::system::error_code ec;
    tcp::socket& socket = stream->next_layer();
    socket.open(tcp::v4(), ec);
    if (!ec) socket.bind(tcp::endpoint(asio::ip::make_address(address), 0), ec);
    if (!ec) socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
    if (!ec) stream->handshake(asio::ssl::stream_base::client, ec);
    if (ec) return false;
    streams_.push_back(std::move(stream));
    return true;
  }
  size_t size() const { return streams_.size(); }
  // Those the webhook has not closed (no end of stream or reset seen on them).
  size_t StillOpen() { return Poll(false, 0); }
  // Forgets those the webhook closed (closing them here too), after waiting up to `wait_ms` for
  // one to be closed when none is; how many are left.
  size_t DropClosed(int wait_ms = 0) { return Poll(true, wait_ms); }
  // The first still open; null when none is.
  TlsStream* FirstOpen() {
    Poll(true, 0);
    return streams_.empty() ? nullptr : streams_.front().get();
  }

 private:
  size_t Poll(bool drop, int wait_ms) {
    std::vector<pollfd> fds;
    for (const auto& s : streams_) fds.push_back({s->next_layer().native_handle(), POLLRDHUP, 0});
    if (fds.empty() || ::poll(fds.data(), fds.size(), wait_ms) <= 0) return streams_.size();
    size_t open = 0;
    std::vector<std::unique_ptr<TlsStream>> kept;
    for (size_t i = 0; i < fds.size(); ++i) {
      const bool closed = fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR);
      open += !closed;
      if (!closed || !drop) kept.push_back(std::move(streams_[i]));
    }
    streams_ = std::move(kept);
    return open;
  }

  const int port_;
  asio::io_context io_;
  asio::ssl::context tls_{asio::ssl::context::tls_client};
  std::vector<std::unique_ptr<TlsStream>> streams_;
};

// Admissions as the API server sends them in a burst: `connections` TLS connections from one
// address, each sending the AdmissionReview as soon as it is connected and the next one as soon
// as the answer came (keep-alive), until `requests` were sent or `limit` passed.
struct BurstOutcome {
  int answered_200 = 0, answered_other = 0, failed = 0;
  std::string first_error;
  double seconds = 0;
};

class BurstConnection : public std::enable_shared_from_this<BurstConnection> {
 public:
  struct Shared {
    asio::ssl::context tls{asio::ssl::context::tls_client};
    http::request<http::string_body> request;
    std::chrono::steady_clock::time_point deadline;
    int requests = 0, sent = 0;
    BurstOutcome outcome;
  };
  BurstConnection(asio::io_context& io, Shared& shared) : shared_(shared), stream_(io, shared.tls) {}

  void Start(const std::string& source, int port) {
    tcp::socket& socket = beast::get_lowest_layer(stream_).socket();
    boost::system::error_code bind_ec;
    socket.open(tcp::v4(), bind_ec);
    if (!bind_ec) socket.bind(tcp::endpoint(asio::ip::make_address(source), 0), bind_ec);
    if (bind_ec) return Fail(bind_ec, "bind");
    beast::get_lowest_layer(stream_).expires_at(shared_.deadline);
    beast::get_lowest_layer(stream_).async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)),
        [self = shared_from_this()](beast::error_code connect_ec) {
          if (connect_ec) return self->Fail(connect_ec, "connect");
          self->stream_.async_handshake(asio::ssl::stream_base::client, [self](beast::error_code ec) {
            if (ec) return self->Fail(ec, "handshake");
            self->Send();
          });
        });
  }

 private:
  void Send() {
    if (shared_.sent >= shared_.requests) return;  // done: the connection closes with this object
    ++shared_.sent;
    http::async_write(stream_, shared_.request, [self = shared_from_this()](beast::error_code write_ec, size_t) {
      if (write_ec) return self->Fail(write_ec, "write");
      self->response_ = {};
      http::async_read(self->stream_, self->buffer_, self->response_, [self](beast::error_code ec, size_t) {
        if (ec) return self->Fail(ec, "read");
        const bool allowed = self->response_.body().find("\"allowed\":true") != std::string::npos;
        ++(self->response_.result_int() == 200 && allowed ? self->shared_.outcome.answered_200
                                                          : self->shared_.outcome.answered_other);
        self->Send();
      });
    });
  }
  void Fail(beast::error_code ec, const char* step) {
    if (shared_.outcome.failed++ == 0) shared_.outcome.first_error = std::string(step) + ": " + ec.message();
  }

  Shared& shared_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
};

BurstOutcome AdmissionBurst(int port, const std::string& source, int connections, int requests,
                            std::chrono::seconds limit) {
  BurstConnection::Shared shared;
  shared.tls.set_verify_mode(asio::ssl::verify_none);
  shared.request = {http::verb::post, "/mutate", 11};
  shared.request.set(http::field::host, "127.0.0.1");
  shared.request.set(http::field::content_type, "application/json");
  shared.request.keep_alive(true);
  shared.request.body() = kReview;
  shared.request.prepare_payload();
  shared.requests = std::max(requests, connections);
  const auto start = std::chrono::steady_clock::now();
  shared.deadline = start + limit;
  asio::io_context io;
  for (int i = 0; i < connections; ++i) std::make_shared<BurstConnection>(io, shared)->Start(source, port);
  io.run();
  shared.outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return shared.outcome;
}

// Another address asking while something else goes on: every `every`, one admission over a new
// connection from 127.0.0.1, timed, and the webhook's RSS sampled; until Stop.
class Prober {
 public:
  Prober(int port, std::string ca, int webhook_pid, std::chrono::milliseconds every)
      : thread_([=, this] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!stop_) {
            lock.unlock();
            const auto ask = std::chrono::steady_clock::now();
            const testing::HttpsAnswer answer = testing::HttpsCall(port, ca, "/mutate", kReview);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ask).count();
            const double rss = RssBytes(webhook_pid);
            lock.lock();
            ++asked_;
            if (answer.status != 200) ++failed_;
            worst_seconds_ = std::max(worst_seconds_, seconds);
            peak_rss_ = std::max(peak_rss_, rss);
            stopped_.wait_for(lock, every, [this] { return stop_; });
          }
        }) {}
  ~Prober() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    stopped_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  int asked() const { return asked_; }
  int failed() const { return failed_; }
  double worst_seconds() const { return worst_seconds_; }
  double peak_rss() const { return peak_rss_; }

 private:
  std::mutex mu_;
  std::condition_variable stopped_;
  bool stop_ = false;
  int asked_ = 0, failed_ = 0;
  double worst_seconds_ = 0, peak_rss_ = 0;
  std::thread thread_;
};

// A counter of the webhook's connections shed for `reason`, from its /metrics; -1 unread.
double ShedCount(int probe_port, const std::string& reason) {
  const std::string text = testing::HttpsCall(probe_port, "", "/metrics").body;
  const std::string key = "graintune_webhook_connections_shed_total{reason=\"" + reason + "\"} ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

// Room for the flood's client sockets here and the webhook's 1,024 connections (a pod's limit
// is far higher than a login shell's 1,024): the soft limit raised to the hard one, inherited.
void RaiseOpenFileLimit() {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 8192);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GE(files.rlim_cur, 4096u) << "the test needs 4,096 open files";
}

// One address floods the webhook with 1,500 idle TLS connections, as any pod in the cluster
// could. The webhook holds at most its ceiling (1,024, within the chart's memory limit: a new
// connection past it takes the slot of the flood's oldest idle one), another address is served
// at once, and every flood connection is closed by its first request's deadline
// (--header-timeout, 5 s). (Kept-alive idle connections past an address's share are trimmed
// sooner: server/https_server_test.cc.)
TEST_F(WebhookProcessTest, AFloodOfIdleConnectionsFromOneAddressLocksNoOtherOut) {
  RaiseOpenFileLimit();
  Start({"--shutdown-delay", "0"});
  const double rss_before = RssBytes(webhook_.pid());
  IdleConnections flood(port_);
  int refused = 0;
  const auto flood_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1500; ++i) refused += !flood.Open("127.0.0.7");
  const auto flood_end = std::chrono::steady_clock::now();
  const double flood_seconds = std::chrono::duration<double>(flood_end - flood_start).count();
  const size_t held = flood.StillOpen();
  const double rss_flooded = RssBytes(webhook_.pid());
  // Another address, while the flood holds its connections.
  const auto ask = std::chrono::steady_clock::now();
  testing::HttpsAnswer answer = testing::HttpsCall(port_, ca_, "/mutate", kReview);
  const double served_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ask).count();
  std::printf("flood from 127.0.0.7: 1,500 idle TLS connections opened in %.1f s (%d closed during the "
              "handshake), %zu held at its end; 127.0.0.1 served in %.3f s; webhook RSS %.0f MB before, "
              "%.0f MB flooded\n",
              flood_seconds, refused, held, served_seconds, rss_before / 1e6, rss_flooded / 1e6);
  EXPECT_EQ(answer.status, 200) << answer.error;
  EXPECT_LT(served_seconds, 2.0);
  EXPECT_LE(held, 1024u) << "the ceiling";
  EXPECT_LT(rss_flooded, kChartMemoryLimit);
  // None of them ever sends a request: each is closed at its first request's deadline
  // (--header-timeout, 5 s), unless a newcomer at the ceiling took its slot first.
  ASSERT_TRUE(testing::WaitFor([&] { return flood.StillOpen() == 0; }, 15s));
  const double closed_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - flood_end).count();
  std::printf("the flood's last idle connection was closed %.1f s after it ended; %.0f reclaimed for room, "
              "%.0f refused\n",
              closed_after, ShedCount(probe_port_, "reclaimed_for_room"), ShedCount(probe_port_, "refused_full"));
  EXPECT_LT(closed_after, 11.0);
  EXPECT_EQ(ShedCount(probe_port_, "refused_full"), 0) << "no connection was at work";
}

// Thirty addresses holding 50 idle TLS connections each (1,500: past the ceiling, each within
// its share): the webhook holds at most 1,024, within the chart's memory limit, and another
// address is served at once.
TEST_F(WebhookProcessTest, ThirtyAddressesHoldingFiftyIdleEachLockNoOtherOut) {
  RaiseOpenFileLimit();
  Start({"--shutdown-delay", "0"});
  IdleConnections flood(port_);
  for (int a = 1; a <= 30; ++a)
    for (int i = 0; i < 50; ++i) flood.Open("127.0.1." + std::to_string(a));
  const size_t held = flood.StillOpen();
  const double rss = RssBytes(webhook_.pid());
  const auto ask = std::chrono::steady_clock::now();
  testing::HttpsAnswer answer = testing::HttpsCall(port_, ca_, "/mutate", kReview);
  const double served_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ask).count();
  std::printf("30 addresses x 50 idle TLS connections: %zu opened, %zu held; 127.0.0.1 served in %.3f s; "
              "webhook RSS %.0f MB (chart limit 256Mi)\n",
              flood.size(), held, served_seconds, rss / 1e6);
  EXPECT_EQ(answer.status, 200) << answer.error;
  EXPECT_LT(served_seconds, 2.0);
  EXPECT_LE(held, 1024u);
  EXPECT_LT(rss, kChartMemoryLimit);
}

// The API server's burst, as it sends one: 256 AdmissionReviews at once from one address, one
// HTTP/1.1 connection each, then more on the same connections (2,000 in all); meanwhile another
// address keeps an idle flood of 1,000-1,500 connections at the ceiling (replacing what the
// webhook closes), and a third asks every 200 ms. Every admission of the burst is answered 200,
// at least 1,000 within 30 s; the third
// address is served within 2 s throughout; the webhook stays within the chart's memory limit.
TEST_F(WebhookProcessTest, ABurstFromOneAddressIsServedWhileAnIdleFloodLocksNoOneOut) {
  RaiseOpenFileLimit();
  Start({"--shutdown-delay", "0"});
  std::atomic<bool> stop_flood{false};
  std::atomic<long> flood_opened{0};
  std::atomic<bool> flood_at_ceiling{false};
  std::thread flooder([&] {
    IdleConnections flood(port_);
    while (!stop_flood) {
      // Hold 1,500 (past the ceiling), replacing those the webhook closes as soon as it does.
      const size_t held = flood.DropClosed(flood.size() >= 1500 ? 50 : 0);
      if (held >= 1000) flood_at_ceiling = true;
      if (held >= 1500) continue;
      flood_opened += flood.Open("127.0.0.7");
    }
  });
  ASSERT_TRUE(testing::WaitFor([&] { return flood_at_ceiling.load(); }, 60s));
  Prober prober(port_, ca_, webhook_.pid(), 200ms);
  const BurstOutcome burst = AdmissionBurst(port_, "127.0.0.2", 256, 2000, 30s);
  prober.Stop();
  stop_flood = true;
  flooder.join();
  std::printf("burst from 127.0.0.2: %d answered 200, %d otherwise, %d failed (%s) in %.1f s; "
              "flood from 127.0.0.7: %ld connections opened; 127.0.0.1: %d asked, %d failed, worst %.3f s; "
              "webhook peak RSS %.0f MB; shed: %.0f reclaimed for room, %.0f idle over share, %.0f refused\n",
              burst.answered_200, burst.answered_other, burst.failed, burst.first_error.c_str(),
              burst.seconds, flood_opened.load(), prober.asked(), prober.failed(), prober.worst_seconds(),
              prober.peak_rss() / 1e6, ShedCount(probe_port_, "reclaimed_for_room"),
              ShedCount(probe_port_, "idle_over_share"), ShedCount(probe_port_, "refused_full"));
  EXPECT_EQ(burst.failed, 0) << burst.first_error;
  EXPECT_EQ(burst.answered_other, 0);
  EXPECT_GE(burst.answered_200, 1000);
  EXPECT_LT(burst.seconds, 30.0);
  EXPECT_GT(prober.asked(), 0);
  EXPECT_EQ(prober.failed(), 0);
  EXPECT_LT(prober.worst_seconds(), 2.0);
  EXPECT_LT(prober.peak_rss(), kChartMemoryLimit);
  EXPECT_EQ(ShedCount(probe_port_, "refused_full"), 0);
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
