// graintune-exporter: the native sidecar the webhook injects into tuned pods. It follows
// MaxText's metrics file on a shared emptyDir, samples the pod's processes when the pod shares
// its PID namespace, and serves
//   /steps?since=N  the steps of the current run as JSON (what the operator reads),
//   /metrics        Prometheus text (last step's figures, counters),
//   /healthz
// on a configurable address and port (TPU pods often use host networking).
//
// Flags: kUsage below (also `graintune-exporter --help`).
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <cstdlib>
#include <charconv>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "operator/last_step_message.h"
#include "operator/metrics_file_follower.h"
#include "operator/process_stats.h"
#include "operator/step_log.h"
#include "base/log.h"
#include "server/flags.h"
#include "server/https_server.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

constexpr char kProgram[] = "graintune-exporter";
constexpr char kUsage[] = R"(graintune-exporter: the sidecar graintune adds to tuned pods; serves their steps.

usage:
  graintune-exporter --metrics-file PATH [--bind-address A] [--port N]
                     [--poll-interval-ms N] [--proc-root /proc] [--trainer-pattern MaxText]
                     [--termination-message-path /dev/termination-log]
                     [--log-level error|warning|info|debug]
)";

long SinceParameter(const std::string& target) {
  const size_t q = target.find("since=");
  if (q == std::string::npos) return -1;
  long v = -1;
  const char* begin = target.c_str() + q + 6;
  std::from_chars(begin, target.c_str() + target.size(), v);
  return v;
}

// Prometheus view of the StepLog, refreshed on each scrape.
class ExporterMetrics {
 public:
  ExporterMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
    auto gauge = [&](const char* name, const char* help) {
      return &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add({});
    };
    step_ = gauge("graintune_exporter_step", "Last training step in the metrics file");
    step_time_ = gauge("graintune_exporter_step_time_seconds", "Step time of the last step");
    tflops_ = gauge("graintune_exporter_tflops_per_device", "TFLOP/s per device of the last step");
    tokens_ = gauge("graintune_exporter_tokens_per_device_per_second",
                    "Tokens per second per device of the last step");
    run_ = gauge("graintune_exporter_run", "Runs seen (the metrics file restarted)");
    lines_ = gauge("graintune_exporter_lines", "Metrics lines read in total");
    malformed_ = gauge("graintune_exporter_malformed_lines", "Metrics lines skipped as malformed");
    workers_ = gauge("graintune_exporter_grain_workers", "Grain worker processes seen in /proc");
    busy_ = gauge("graintune_exporter_worker_busy_fraction", "Share of time Grain workers were busy");
    // Every step's time, for Prometheus-side windows (the operator's --prometheus-url mode).
    steps_ = &prometheus::BuildHistogram()
                  .Name("graintune_exporter_step_duration_seconds")
                  .Help("MaxText step times as read from the metrics file")
                  .Register(*registry_)
                  .Add({}, prometheus::Histogram::BucketBoundaries{
                               0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.25, 4.5, 4.75, 5,
                               5.5, 6, 7, 8, 9, 10, 12, 15, 20, 30, 45, 60, 120});
  }
  void Observe(const std::vector<graintune::op::StepSample>& samples) {
    for (const auto& s : samples) steps_->Observe(s.step_time_seconds);
  }
  std::string Render(const graintune::op::StepLog::Totals& t) {
    run_->Set(t.run);
    lines_->Set(static_cast<double>(t.lines));
    malformed_->Set(static_cast<double>(t.malformed));
    if (t.last) {
      step_->Set(static_cast<double>(t.last->step));
      step_time_->Set(t.last->step_time_seconds);
      if (t.last->tflops_per_device >= 0) tflops_->Set(t.last->tflops_per_device);
      if (t.last->tokens_per_device_per_second >= 0) tokens_->Set(t.last->tokens_per_device_per_second);
    }
    if (t.process) {
      workers_->Set(t.process->workers);
      busy_->Set(t.process->worker_busy_fraction);
    }
    return prometheus::TextSerializer().Serialize(registry_->Collect());
  }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge *step_, *step_time_, *tflops_, *tokens_, *run_, *lines_, *malformed_,
      *workers_, *busy_;
  prometheus::Histogram* steps_;
};

}  // namespace

int main(int argc, char** argv) {
  graintune::server::ExitWithHelpIfAsked(argc, argv, kUsage);
  using namespace graintune;
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(server::Arguments(argc, argv),
                                     {"log-level", "metrics-file", "bind-address", "port", "poll-interval-ms",
                                      "proc-root", "trainer-pattern", "termination-message-path"}));
  if (!flags.positional().empty())
    server::ExitWithUsageError(kProgram, "unexpected argument '" + flags.positional().front() + "'");
  server::SetUpLogging(kProgram, flags);
  server::HttpsServerOptions options;
  options.bind_address = flags.Get("bind-address").value_or("0.0.0.0");
  options.port = static_cast<unsigned short>(
      server::ExitOnUsageError(kProgram, flags.IntegerIn("port", 1, 65535)).value_or(9431));
  options.threads = 1;
  options.max_body_bytes = 4096;  // it takes no request bodies
  const std::string metrics_file = flags.Get("metrics-file").value_or("");
  const std::string proc_root = flags.Get("proc-root").value_or("/proc");
  const std::string pattern = flags.Get("trainer-pattern").value_or("MaxText");
  const int poll_ms =
      server::ExitOnUsageError(kProgram, flags.IntegerIn("poll-interval-ms", 10, 60000)).value_or(500);
  if (metrics_file.empty())
    server::ExitWithUsageError(kProgram, "--metrics-file is required");
  const char* uid = std::getenv("GRAINTUNE_POD_UID");
  op::StepLog log(20000, uid ? uid : "");
  ExporterMetrics metrics;
  std::mutex metrics_mu;
  server::HttpsServer server(options, [&](const server::HttpRequest& r) -> server::HttpResponse {
    const std::string path = r.target.substr(0, r.target.find('?'));
    if (r.method != "GET") return {405, "text/plain", "GET only\n"};
    if (path == "/steps") return {200, "application/json", log.ToJson(SinceParameter(r.target)).dump()};
    if (path == "/metrics") {
      std::lock_guard<std::mutex> lock(metrics_mu);
      return {200, "text/plain; version=0.0.4", metrics.Render(log.totals())};
    }
    if (path == "/healthz") return {200, "text/plain", "ok\n"};
    return {404, "text/plain", "not found\n"};
  });
  if (Status s = server.Start(); !s.ok()) {
    LogLine(LogLevel::kError) << s.message();
    return 1;
  }
  LogLine(LogLevel::kInfo) << "following " << metrics_file << ", serving on "
            << options.bind_address << ":" << server.port();
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  op::MetricsFileFollower follower(metrics_file);
  op::ProcessSampler sampler(proc_root, pattern);
  // The last step, kept in the termination message as it moves: the kubelet reads the file
  // whenever the sidecar stops, so a SIGKILL loses nothing written before it.
  const std::string termination_path = flags.Get("termination-message-path").value_or("");
  long written_step = -1;
  auto write_last_step = [&] {
    const op::StepLog::Totals t = log.totals();
    if (termination_path.empty() || !t.last || t.last->step == written_step) return;
    std::ofstream out(termination_path, std::ios::trunc);
    out << op::LastStepMessage(t.last->step);
    if (out.flush()) written_step = t.last->step;
    else LogLine(LogLevel::kWarning) << "cannot write " << termination_path;
  };
  for (bool stopping = false; !stopping;) {
    stopping = g_stop;  // after a stop, one more read of the file, then out
    op::MetricsFileFollower::Update u = follower.Poll();
    if (u.restarted) log.Restart();
    log.Add(u.samples, u.lines, u.malformed);
    {
      std::lock_guard<std::mutex> lock(metrics_mu);
      metrics.Observe(u.samples);
    }
    if (std::optional<op::ProcessFigures> p = sampler.Sample(std::chrono::steady_clock::now()))
      log.SetProcess(*p);
    write_last_step();
    if (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  server.Stop();
  return 0;
}
