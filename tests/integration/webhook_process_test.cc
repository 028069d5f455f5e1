// graintune-webhook as a process, standalone (no API server): its probe port, and what SIGTERM
// does: unready at once, admissions still answered during --shutdown-delay, then a drain and
// exit status 0 within the grace period.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

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
