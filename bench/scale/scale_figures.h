// The scale benchmark's figures and how they are printed: medians and percentiles of samples,
// the operator's resource use from /proc, and the one table plus one JSON line the benchmark
// ends with, each figure beside its target and marked met or missed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "bench/scale/exposition_histogram.h"

namespace graintune::bench {

// The q-quantile (0..1, nearest rank) of the samples; 0 when there are none.
double Quantile(std::vector<double> samples, double q);

// CPU seconds (user + system) a process has used; nullopt when it is gone.
std::optional<double> CpuSeconds(pid_t pid);
// Its peak and current resident set (VmHWM, VmRSS), MiB; 0 when unreadable.
double PeakRssMib(pid_t pid);

// What one steady-state window measured.
struct WindowFigures {
  double seconds = 0;
  double operator_cpu_cores = 0;
  double operator_rss_mib = 0;                   // peak so far
  std::map<std::string, double> requests_per_minute;  // by verb
  double requests_per_minute_total = 0;
  // Of those, the leader election's Lease (a GET and an update every retry period): constant,
  // whatever the cluster holds.
  double lease_requests_per_minute = 0;
  double tuning_writes_per_minute = 0;           // GrainTuning updates seen
  double tuning_writes_per_minute_last_half = 0; // the same in the window's second half
  double pass_p50_s = 0, pass_max_s = 0;         // time between two scrapes of one workload
};

// One phase: exporters all good, or a tenth of them bad.
struct PhaseFigures {
  std::vector<double> recommendation_latency_s;  // per workload and attempt
  int recommendations_missing = 0;               // data existed, no recommendation in time
  int workloads_without_data = 0;                // every exporter bad: no trial possible
  int retries_numbered_as_before = 0;            // Job retries given the attempt they replace
  WindowFigures steady;
};

struct ScaleReport {
  int hosts = 0, pods = 0, workloads = 0, jobsets = 0, singles = 0;
  std::string commit;
  double admission_p50_hooked_ms = 0, admission_p99_hooked_ms = 0;
  double admission_p50_plain_ms = 0, admission_p99_plain_ms = 0;
  // The same bursts through a webhook that answers at once (NoopWebhook).
  double admission_p50_noop_ms = 0, admission_p99_noop_ms = 0;
  int admission_samples = 0;
  // Where a hooked admission's time went, observed over the bursts: the webhook's own time to
  // answer (graintune_webhook_request_duration_seconds), and its call as the API server timed
  // it (apiserver_admission_webhook_admission_duration_seconds, CREATE).
  HistogramReading webhook_own, webhook_call;
  // Connections to graintune's webhook closed at accept or reclaimed during the bursts, by
  // reason (graintune_webhook_connections_shed_total); empty when the metric was not read.
  // refused_full is what refuses admissions (the target is 0).
  std::map<std::string, double> webhook_connections_shed;
  PhaseFigures good, bad;
  WindowFigures quiet;  // exporters good, trainers paused: nothing changes
  double recommendation_timeout_s = 0;
  // The phases measured so far, in order: "recommendations good", "admission", "steady",
  // "quiet", "recommendations bad", "steady bad".
  std::vector<std::string> measured;
};

// The table (with targets and verdicts) on stdout, then the JSON line; returns the JSON.
nlohmann::json PrintReport(const ScaleReport& report);

// After a run stopped early (`why`): the figures of the phases it measured, as one JSON line
// with "incomplete" and "measured", no table and no verdicts (a phase not reached has none).
nlohmann::json PrintMeasuredSoFar(const ScaleReport& report, const std::string& why);

}  // namespace graintune::bench
