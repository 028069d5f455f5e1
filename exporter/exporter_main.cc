// graintune-exporter: the native sidecar the webhook injects into tuned pods. It follows
// MaxText's metrics file on a shared emptyDir, samples the pod's processes when the pod shares
// its PID namespace, and serves
//   /steps?since=N  the steps of the current run as JSON (what the operator reads),
//   /metrics        Prometheus text (last step's figures, counters),
//   /healthz
// on a configurable address and port (TPU pods often use host networking). When the pod runs a
// practice lap (graintune-launcher), /steps also carries the lap's steps, figures and result
// (exporter/lap_watch.h).
//
// Flags: ExporterCommand() below (also `graintune-exporter --help`).
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <cstdlib>
#include <charconv>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "telemetry/last_step_message.h"
#include "exporter/lap_watch.h"
#include "exporter/metrics_file_follower.h"
#include "exporter/process_stats.h"
#include "exporter/start_check_watch.h"
#include "telemetry/step_log.h"
#include "base/log.h"
#include "server/flags.h"
#include "server/https_server.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

const graintune::server::ServerCommand& ExporterCommand() {
  using graintune::server::FlagSpec;
  static const graintune::server::ServerCommand kCommand{
      .program = "graintune-exporter",
      .summary = "the sidecar graintune adds to tuned pods; serves their steps.",
      .flags = {
          {.name = "metrics-file", .value_name = "PATH", .help = "MaxText's metrics_file, followed as it grows",
           .required = true},
          {.name = "bind-address", .value_name = "A", .default_text = "0.0.0.0", .help = "address to serve on"},
          {.name = "port", .value_name = "N", .default_text = "9431", .help = "/steps, /metrics and /healthz (HTTP)"},
          {.name = "poll-interval-ms", .value_name = "N", .default_text = "500",
           .help = "the metrics file and /proc are read this often (10-60000)"},
          {.name = "proc-root", .value_name = "DIR", .default_text = "/proc", .help = "where the pod's processes are seen"},
          {.name = "trainer-pattern", .value_name = "TEXT", .default_text = "MaxText",
           .help = "the trainer's command line contains this (case ignored)"},
          {.name = "lap-metrics-file", .value_name = "PATH",
           .help = "the practice lap's metrics_file (graintune-launcher's --lap-metrics-file); "
                   "lap.jsonl beside --metrics-file when not given"},
          {.name = "lap-result-file", .value_name = "PATH",
           .help = "how the practice lap ended (graintune-launcher's --result-file); "
                   "lap-result.json beside --metrics-file when not given"},
          {.name = "start-check-report-file", .value_name = "PATH",
           .help = "what the trainer's start check saw (graintune-launcher's --start-check-report); "
                   "start-check.json beside --metrics-file when not given"},
          {.name = "termination-message-path", .value_name = "PATH",
           .help = "the last step is kept here (the pod's terminationMessagePath, /dev/termination-log)"}}};
  return kCommand;
}

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
  void Observe(const std::vector<graintune::telemetry::StepSample>& samples) {
    for (const auto& s : samples) steps_->Observe(s.step_time_seconds);
  }
  std::string Render(const graintune::telemetry::StepLog::Totals& t) {
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
  using namespace graintune;
  const std::string& program = ExporterCommand().program;
  const server::Flags flags = server::ParseServerFlags(ExporterCommand(), argc, argv);
  server::HttpsServerOptions options;
  options.bind_address = *flags.Get("bind-address");
  options.port = static_cast<unsigned short>(*server::ExitOnUsageError(program, flags.IntegerIn("port", 1, 65535)));
  options.threads = 1;
  options.max_body_bytes = 4096;  // it takes no request bodies
  const std::string metrics_file = flags.Get("metrics-file").value_or("");
  const std::string proc_root = *flags.Get("proc-root");
  const std::string pattern = *flags.Get("trainer-pattern");
  const int poll_ms = *server::ExitOnUsageError(program, flags.IntegerIn("poll-interval-ms", 10, 60000));
  if (metrics_file.empty())
    server::ExitWithUsageError(program, "--metrics-file is required");
  const char* uid = std::getenv("GRAINTUNE_POD_UID");
  telemetry::StepLog log(20000, uid ? uid : "");
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
  exporter::MetricsFileFollower follower(metrics_file);
  exporter::ProcessSampler sampler(proc_root, pattern);
  const std::string beside = std::filesystem::path(metrics_file).parent_path().string();
  auto beside_metrics = [&](const char* flag, const char* name) {
    return flags.Get(flag).value_or((std::filesystem::path(beside) / name).string());
  };
  exporter::LapWatch lap(beside_metrics("lap-metrics-file", "lap.jsonl"),
                         beside_metrics("lap-result-file", "lap-result.json"));
  exporter::StartCheckWatch start_check(beside_metrics("start-check-report-file", telemetry::kStartCheckReportFileName));
  // The last step, kept in the termination message as it moves: the kubelet reads the file
  // whenever the sidecar stops, so a SIGKILL loses nothing written before it.
  const std::string termination_path = flags.Get("termination-message-path").value_or("");
  long written_step = -1;
  auto write_last_step = [&] {
    const telemetry::StepLog::Totals t = log.totals();
    if (termination_path.empty() || !t.last || t.last->step == written_step) return;
    std::ofstream out(termination_path, std::ios::trunc);
    out << telemetry::LastStepMessage(t.last->step);
    if (out.flush()) written_step = t.last->step;
    else LogLine(LogLevel::kWarning) << "cannot write " << termination_path;
  };
  for (bool stopping = false; !stopping;) {
    stopping = g_stop;  // after a stop, one more read of the file, then out
    exporter::MetricsFileFollower::Update u = follower.Poll();
    if (u.restarted) log.Restart();
    log.Add(u.samples, u.lines, u.malformed);
    {
      std::lock_guard<std::mutex> lock(metrics_mu);
      metrics.Observe(u.samples);
    }
    const auto now = std::chrono::steady_clock::now();
    const std::optional<telemetry::ProcessFigures> process = sampler.Sample(now);
    if (process) log.SetProcess(*process);
    lap.Poll(now, process);
    if (std::optional<telemetry::LapReport> report = lap.Report(now)) log.SetLap(std::move(report).value());
    if (std::optional<telemetry::StartCheckReport> check = start_check.Poll()) log.SetStartCheck(std::move(check).value());
    write_last_step();
    if (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  server.Stop();
  return 0;
}
