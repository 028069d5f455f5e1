// The operator's Prometheus source against a real Prometheus (Debian's package) scraping real
// graintune-exporters fed by the trainer emulator: the trial it builds from the query API agrees
// with the one built from the exporter's own /steps, data-bound when starved, fed when not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "kube/client.h"
#include "operator/prometheus_source.h"
#include "operator/tuning_reconciler.h"
#include "tests/controlplane/child_process.h"

namespace graintune::op {
namespace {

using testing::ChildProcess;

constexpr char kPrometheus[] = "/usr/bin/prometheus";

struct FedPod {
  std::string uid;
  int workers;
  int port;
  ChildProcess exporter, trainer;
};

Result<telemetry::StepsDocument> Steps(int port) {
  kube::ClientConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.allow_plain_http = true;
  auto client = kube::Client::FromConfig(c);
  if (!client.ok()) return client.error().ToStatus();
  kube::ApiResult<std::string> body = (*client)->GetRaw("/steps");
  if (!body.ok()) return body.error().ToStatus();
  return telemetry::ParseStepsDocument(*body);
}

TEST(PrometheusSource, TrialsFromTheQueryApiAgreeWithTheExporter) {
  if (::access(kPrometheus, X_OK) != 0) {
    const char* req = std::getenv("GRAINTUNE_REQUIRE_CONTROLPLANE");
    if (req && std::string(req) == "1") FAIL() << "prometheus is not installed (scripts/setup.sh installs it)";
    std::fprintf(stderr, "\n*** SKIPPED: %s is missing; scripts/setup.sh installs it ***\n\n", kPrometheus);
    GTEST_SKIP();
  }
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("graintune-prom-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/proc");
  std::vector<std::unique_ptr<FedPod>> pods;
  for (auto [uid, workers] : {std::pair{"uid-starved", 4}, std::pair{"uid-fed", 8}}) {
    auto p = std::make_unique<FedPod>();
    p->uid = uid;
    p->workers = workers;
    p->port = *testing::FreeLoopbackPort();
    const std::string metrics = dir + "/" + p->uid + ".jsonl";
    auto e = ChildProcess::Spawn({GRAINTUNE_EXPORTER_BIN, "--metrics-file", metrics, "--bind-address",
                                  "127.0.0.1", "--port", std::to_string(p->port), "--poll-interval-ms",
                                  "100", "--proc-root", dir + "/proc"},
                                 dir + "/" + p->uid + "-exporter.log", {"GRAINTUNE_POD_UID=" + p->uid});
    ASSERT_TRUE(e.ok()) << e.error();
    p->exporter = std::move(e).value();
    pods.push_back(std::move(p));
  }
  const int prom_port = *testing::FreeLoopbackPort();
  {
    std::ofstream cfg(dir + "/prometheus.yml");
    cfg << "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n";
    for (const auto& p : pods)
      cfg << "- job_name: " << p->uid << "\n  static_configs:\n  - targets: ['127.0.0.1:" << p->port
          << "']\n    labels: {pod_uid: " << p->uid << "}\n";
  }
  auto prom = ChildProcess::Spawn({kPrometheus, "--config.file", dir + "/prometheus.yml",
                                   "--storage.tsdb.path", dir + "/tsdb", "--web.listen-address",
                                   "127.0.0.1:" + std::to_string(prom_port)},
                                  dir + "/prometheus.log");
  ASSERT_TRUE(prom.ok()) << prom.error();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // first scrapes: the series start at 0
  const auto start = std::chrono::steady_clock::now();
  for (auto& p : pods) {
    auto t = ChildProcess::Spawn({GRAINTUNE_TRAINER_EMULATOR_BIN, "--workers", std::to_string(p->workers),
                                  // Both runs last about as long as the wait below (the fed one
                                  // steps faster, so it takes more steps).
                                  "--metrics-file", dir + "/" + p->uid + ".jsonl", "--steps",
                                  p->workers == 4 ? "60" : "110",
                                  "--time-scale", "0.05"},
                                 dir + "/" + p->uid + "-trainer.log");
    ASSERT_TRUE(t.ok());
    p->trainer = std::move(t).value();
  }
  std::this_thread::sleep_for(std::chrono::seconds(27));  // both runs end (~24 s), then scrapes
  const double run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  kube::ClientConfig pc;
  pc.server = "http://127.0.0.1:" + std::to_string(prom_port);
  pc.allow_plain_http = true;
  auto client = kube::Client::FromConfig(pc);
  ASSERT_TRUE(client.ok());
  for (const auto& p : pods) {
    Result<Trial> from_prom = TrialFromPrometheus(**client, p->uid, run_seconds, 0, p->workers, 65536);
    ASSERT_TRUE(from_prom.ok()) << from_prom.error() << "\n" << testing::TailOfFile(dir + "/prometheus.log");
    Result<telemetry::StepsDocument> doc = Steps(p->port);
    ASSERT_TRUE(doc.ok()) << doc.error();
    Result<Trial> direct = TrialFromSteps(0, p->workers, *doc, 65536, 2);
    ASSERT_TRUE(direct.ok()) << direct.error();
    std::printf("%s: prometheus mean %.2f s (%d samples, data-bound %d), exporter mean %.2f s (data-bound %d)\n",
                p->uid.c_str(), from_prom->step_seconds_mean, from_prom->samples,
                IsDataBound(*from_prom), direct->step_seconds_mean, IsDataBound(*direct));
    EXPECT_GE(from_prom->samples, 8);
    EXPECT_NEAR(from_prom->step_seconds_mean, direct->step_seconds_mean, 0.2 * direct->step_seconds_mean);
    EXPECT_EQ(IsDataBound(*from_prom), p->workers == 4) << "starved at 4 workers, fed at 8";
  }
  EXPECT_FALSE(PrometheusScalar(**client, "sum(graintune_no_such_metric)").ok());
  pods.clear();
  prom.value().Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace graintune::op
