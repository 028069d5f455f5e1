// scale_bench: graintune on a local control plane at cluster scale. KWOK TPU Nodes (each with a
// Lease renewed every 10 s, as kubelets do), graintune installed from its Helm chart (webhook
// and operator as local processes with the chart's arguments, local_install.h), JobSets and
// single-host Jobs with grain_worker_count=-1 restarted a few times, and every exporter served
// by a stand-in at the pod's IP (exporter_standin.h). Phases, in order:
//   1. attempt 0 of every workload: recommendation latency (exporters good);
//   2. a restart: attempt 1, its latency;
//   3. admission bursts of one slice's pods: through graintune's webhook, through none, and
//      through one that does nothing (noop_webhook.h), interleaved;
//   4. a steady window (exporters good), then a quiet one (trainers paused);
//   5. a tenth of the exporters turn bad (blackholed, or answering after 10 s); a restart:
//      attempt 2, its latency and a steady window.
// Prints one table and one JSON line (scale_figures.h). Everything it starts stops when it
// ends or is interrupted.
//
//   scale_bench --bin-dir DIR --source-dir DIR --build-dir DIR [--hosts 2048] [--singles N]
//               [--rounds 3] [--window-seconds 60] [--quiet-seconds 30] [--step-interval-ms 2000]
//               [--commit REV]
#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "bench/scale/admission_burst.h"
#include "bench/scale/noop_webhook.h"
#include "bench/scale/api_audit.h"
#include "bench/scale/exporter_standin.h"
#include "bench/scale/exposition_histogram.h"
#include "bench/scale/local_install.h"
#include "bench/scale/scale_cluster.h"
#include "bench/scale/scale_figures.h"
#include "bench/scale/scale_phases.h"
#include "bench/scale/workload_tracker.h"
#include "kube/config.h"
#include "operator/tuning_reconciler.h"
#include "server/flags.h"
#include "tests/controlplane/https_call.h"
#include "tests/controlplane/wait_for.h"

namespace {

using namespace graintune;
using namespace graintune::bench;
namespace gt = graintune::testing;
using Clock = std::chrono::steady_clock;

constexpr char kProgram[] = "scale_bench";
std::atomic<bool> g_interrupted{false};
void OnSignal(int) { g_interrupted = true; }

void Say(const std::string& text) {
  std::fprintf(stderr, "scale_bench: %s\n", text.c_str());
}

bool WaitFor(const std::function<bool()>& done, int seconds) {
  return gt::WaitFor(done, std::chrono::seconds(seconds), &g_interrupted);
}

bool Pause(int seconds) {
  return !WaitFor([] { return false; }, seconds) && !g_interrupted;
}


}  // namespace

int main(int argc, char** argv) {
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(server::Arguments(argc, argv),
                                     {"bin-dir", "source-dir", "build-dir", "hosts", "singles", "rounds",
                                      "window-seconds", "quiet-seconds", "step-interval-ms",
                                      "burst-concurrency", "timeout-seconds", "commit"}));
  auto int_flag = [&](const char* name, int lo, int hi, int fallback) {
    return server::ExitOnUsageError(kProgram, flags.IntegerIn(name, lo, hi)).value_or(fallback);
  };
  const std::string bin_dir = flags.Get("bin-dir").value_or(""), source_dir = flags.Get("source-dir").value_or(""),
                    build_dir = flags.Get("build-dir").value_or("");
  if (bin_dir.empty() || source_dir.empty() || build_dir.empty())
    server::ExitWithUsageError(kProgram, "--bin-dir, --source-dir and --build-dir are required");
  ScaleShape shape;
  const int hosts = int_flag("hosts", 16, 16384, 2048);
  shape.hosts_per_jobset = hosts / shape.jobsets;
  if (hosts % shape.jobsets || (shape.hosts_per_jobset & (shape.hosts_per_jobset - 1)))
    server::ExitWithUsageError(kProgram, "--hosts must be 8 x a power of two (16, 32, ..., 2048)");
  shape.singles = int_flag("singles", 0, 1000, std::max(4, hosts * 100 / 2048));
  const int rounds = int_flag("rounds", 1, 20, 3);
  const int window_s = int_flag("window-seconds", 5, 3600, 60);
  const int quiet_s = int_flag("quiet-seconds", 5, 3600, 30);
  const int timeout_s = int_flag("timeout-seconds", 30, 3600, 180);
  const std::chrono::milliseconds step_interval(int_flag("step-interval-ms", 100, 60000, 2000));

  // Thousands of listening sockets (one per pod) and connections.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  const std::string work = std::filesystem::temp_directory_path() / ("graintune-scale-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  struct RemoveWork {
    std::string dir;
    bool keep = false;
    ~RemoveWork() {
      std::error_code ec;
      if (!keep) std::filesystem::remove_all(dir, ec);
    }
  } remove_work{work};
  const LocalInstallOptions install_options{.source_dir = source_dir, .build_dir = build_dir,
                                            .set_values = {"webhook.excludeNamespaces={burst-plain,burst-noop}"}};
  const std::string system_ns = install_options.ns;
  const std::string audit_policy = work + "/audit-policy.yaml", audit_log = work + "/audit.log";
  if (Status s = gt::WriteFile(audit_policy, AuditPolicyFor({"system:serviceaccount:" + system_ns + ":graintune-operator",
                                                              "system:serviceaccount:" + system_ns + ":graintune-webhook"}));
      !s.ok()) {
    std::cerr << kProgram << ": " << s.message() << "\n";
    return 1;
  }

  Say("starting the control plane (etcd, kube-apiserver with an audit log of graintune's requests, "
      "controller-manager, scheduler, KWOK with node leases, JobSet)");
  gt::ControlPlaneOptions o;
  o.bin_dir = bin_dir;
  o.crd_files = {bin_dir + "/../crds/jobset.x-k8s.io_jobsets.yaml",
                 source_dir + "/crds/graintune.dev_graintunepolicies.yaml",
                 source_dir + "/crds/graintune.dev_graintunings.yaml"};
  o.controllers = o.kwok = o.jobset = true;
  o.kwok_stages_file = source_dir + "/tests/controlplane/kwok-stages.yaml";
  o.kwok_args = {"--config", source_dir + "/bench/scale/kwok-scale.yaml"};
  o.apiserver_args = AuditFlags(audit_policy, audit_log);
  // A slice's pods are created and bound at ~100/s instead of the default client limits' ~20/s.
  o.controller_manager_args = o.scheduler_args = {"--kube-api-qps", "100", "--kube-api-burst", "200"};
  // One KWOK process renews every Node's Lease (2,148 every 10 s) on the bench's 2 cores; while
  // thousands of pods restart it can fall more than the default 50 s behind, and the node
  // lifecycle controller would then taint healthy simulated Nodes NotReady (unschedulable), which
  // no real kubelet's lateness caused. SchedulingPicture() shows Ready and taints if it happens.
  o.controller_manager_args.insert(o.controller_manager_args.end(), {"--node-monitor-grace-period", "5m"});
  Result<std::unique_ptr<gt::ControlPlane>> started = gt::ControlPlane::Start(o);
  if (!started.ok()) {
    std::cerr << kProgram << ": " << started.error() << "\n";
    return 1;
  }
  gt::ControlPlane& cp = **started;
  ScaleReport report;
  auto fail = [&](const std::string& what) {
    // Both directories stay for the failure to be read: the components' and graintune's logs in
    // the control plane's, the audit log of graintune's requests in the bench's.
    cp.KeepDir();
    remove_work.keep = true;
    std::cerr << kProgram << ": " << what << " (logs in " << cp.dir() << ", audit log in " << work << ")\n";
    if (!report.measured.empty()) PrintMeasuredSoFar(report, what);
    return g_interrupted ? 130 : 1;
  };

  Say("creating " + std::to_string(shape.hosts()) + " v5p and " + std::to_string(shape.singles) + " v5e KWOK Nodes");
  if (Status s = CreateNodes(cp, shape); !s.ok()) return fail(s.message());
  if (!WaitFor([&] {
        Result<std::string> ready = cp.Kubectl({"get", "nodes", "-o", "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}"});
        return ready.ok() && std::count(ready->begin(), ready->end(), 'T') == shape.hosts() + shape.singles;
      }, 300))
    return fail("the Nodes did not all become Ready");

  Say("installing graintune from charts/graintune (webhook and operator as local processes)");
  Result<std::unique_ptr<LocalInstall>> installed = LocalInstall::Start(cp, install_options);
  if (!installed.ok()) return fail(installed.error());
  LocalInstall& install = **installed;

  ExporterStandIn standin({.step_interval = step_interval});
  std::map<std::string, int> pods_per_key;
  for (const auto& [key, pods] : WorkloadsOf(shape)) pods_per_key[key] = pods;
  WorkloadTracker tracker(cp.AdminClient(), kNamespace, standin, pods_per_key);
  tracker.Start();
  ScalePhases bench{cp, install, standin, tracker, shape, audit_log, step_interval, timeout_s, g_interrupted};
  report.hosts = shape.hosts();
  report.pods = shape.pods();
  report.workloads = shape.workloads();
  report.jobsets = shape.jobsets;
  report.singles = shape.singles;
  report.commit = flags.Get("commit").value_or("");
  report.recommendation_timeout_s = timeout_s;

  Say("creating " + std::to_string(shape.jobsets) + " JobSets x " + std::to_string(shape.hosts_per_jobset) +
      " hosts and " + std::to_string(shape.singles) + " single-host Jobs");
  Result<std::string> example = kube::ReadFileText(source_dir + "/examples/llama3-8b-v6e-32-jobset.yaml");
  if (!example.ok()) return fail(example.error());
  if (Status s = CreateWorkloads(cp, shape, *example); !s.ok()) return fail(s.message());
  if (Status s = bench.MeasureAttempt(0, false, report.good); !s.ok()) return fail(s.message());
  if (Status s = bench.Restart(1); !s.ok()) return fail(s.message());
  if (Status s = bench.MeasureAttempt(1, false, report.good); !s.ok()) return fail(s.message());
  report.measured.push_back("recommendations good");

  Say("admission: " + std::to_string(rounds) + " rounds of " + std::to_string(shape.hosts_per_jobset) +
      "-pod bursts with graintune's webhook, with none, and with one that does nothing");
  kube::ApiResult<kube::Json> child = cp.AdminClient()->Get(kube::resources::kJobs, kNamespace,
                                                            JobSetName(0) + "-slice-job-0");
  if (!child.ok()) return fail("reading a JobSet's child Job: " + child.error().ToString());
  // The webhook's own histogram and the API server's timing of its calls, read around the
  // bursts: no other pod is created meanwhile, so what they observed is the bursts' admissions.
  // A read that fails leaves the figure out ("none observed") rather than counting history.
  bool metrics_read = true;
  auto webhook_metrics = [&] {
    gt::HttpsAnswer answer = gt::HttpsCall(install.webhook().health_port(), "", "/metrics");
    metrics_read = metrics_read && answer.status == 200;
    return answer.body;
  };
  auto apiserver_metrics = [&] {
    Result<std::string> text = cp.Kubectl({"get", "--raw", "/metrics"});
    metrics_read = metrics_read && text.ok();
    return text.ok() ? *text : std::string();
  };
  constexpr char kOwn[] = "graintune_webhook_request_duration_seconds";
  constexpr char kCall[] = "apiserver_admission_webhook_admission_duration_seconds";
  const std::vector<std::string> call_labels = {"name=\"workers.graintune.dev\"", "operation=\"CREATE\""};
  // A webhook that does nothing, for its own namespace: what any webhook call costs here.
  int timeout_seconds = 10;
  kube::Json hooks = kube::Json::object();
  if (Result<std::string> listed = cp.Kubectl({"get", "mutatingwebhookconfigurations", "-o", "json"}); listed.ok())
    hooks = kube::Json::parse(*listed, nullptr, false);
  if (hooks.is_object())
    for (const kube::Json& c : hooks.value("items", kube::Json::array()))
      for (const kube::Json& w : c.value("webhooks", kube::Json::array()))
        if (w.value("name", "") == "workers.graintune.dev") timeout_seconds = w.value("timeoutSeconds", 10);
  if (Result<std::string> made = cp.Kubectl({"create", "namespace", "burst-noop"}); !made.ok())
    return fail("creating namespace burst-noop: " + made.error());
  Result<std::unique_ptr<NoopWebhook>> noop =
      NoopWebhook::Start(cp, work, "burst-noop", /*threads=*/2, timeout_seconds);
  if (!noop.ok()) return fail(noop.error());
  // The API server calls it once its configuration is in the API server's own cache: a
  // server-side dry run of a pod in its namespace shows when.
  const std::string probe_pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"noop-probe"},)"
                                R"("spec":{"containers":[{"name":"c","image":"x"}]}})";
  if (!WaitFor([&] {
        (void)cp.Kubectl({"create", "--dry-run=server", "-n", "burst-noop", "-f", "-"}, probe_pod);
        return (*noop)->answered() > 0;
      }, 60))
    return fail("the API server did not call the no-op webhook within 60 s");
  const long noop_before = (*noop)->answered();
  // The webhook's connections refused or reclaimed, by reason, from its own counter.
  auto connections_shed = [](const std::string& text) {
    return ReadCounterByLabel(text, "graintune_webhook_connections_shed_total", "reason");
  };
  const std::map<std::string, double> shed_before = connections_shed(webhook_metrics());
  const HistogramReading own_before = ReadHistogram(webhook_metrics(), kOwn);
  const HistogramReading call_before = ReadHistogram(apiserver_metrics(), kCall, call_labels);
  Result<BurstLatencies> bursts = MeasureAdmissionBursts(
      cp, {.pod_template = (*child)["spec"]["template"], .hooked_ns = "burst-hooked",
           .plain_ns = "burst-plain", .noop_ns = "burst-noop", .pods = shape.hosts_per_jobset, .rounds = rounds,
           .concurrency = int_flag("burst-concurrency", 1, 256, 16)});
  if (!bursts.ok()) return fail(bursts.error());
  const long noop_answered = (*noop)->answered() - noop_before;
  noop->reset();  // unregistered: nothing else is created in its namespace
  if (noop_answered < static_cast<long>(bursts->noop_ms.size()))
    return fail("the no-op webhook answered " + std::to_string(noop_answered) + " of " +
                std::to_string(bursts->noop_ms.size()) + " admissions: its arm did not measure a webhook call");
  report.admission_samples = static_cast<int>(bursts->hooked_ms.size());
  report.measured.push_back("admission");
  report.admission_p50_hooked_ms = Quantile(bursts->hooked_ms, 0.5);
  report.admission_p99_hooked_ms = Quantile(bursts->hooked_ms, 0.99);
  report.admission_p50_plain_ms = Quantile(bursts->plain_ms, 0.5);
  report.admission_p99_plain_ms = Quantile(bursts->plain_ms, 0.99);
  report.admission_p50_noop_ms = Quantile(bursts->noop_ms, 0.5);
  report.admission_p99_noop_ms = Quantile(bursts->noop_ms, 0.99);
  for (const auto& [reason, count] : connections_shed(webhook_metrics()))
    report.webhook_connections_shed[reason] = count - (shed_before.count(reason) ? shed_before.at(reason) : 0);
  const HistogramReading own_after = ReadHistogram(webhook_metrics(), kOwn);
  const HistogramReading call_after = ReadHistogram(apiserver_metrics(), kCall, call_labels);
  if (metrics_read) {
    report.webhook_own = own_after.Since(own_before);
    report.webhook_call = call_after.Since(call_before);
  } else {
    Say("reading the webhook's or the API server's /metrics failed: no breakdown of admission time");
  }

  Say("steady state: " + std::to_string(window_s) + " s window");
  Pause(10);
  Result<WindowFigures> steady = bench.Window(window_s);
  if (!steady.ok()) return fail(steady.error());
  report.good.steady = *steady;
  report.measured.push_back("steady");
  // Progress seen before the pause may still be waiting for its write (the operator writes
  // progress at most once per --status-progress-interval-ms): the quiet window opens once
  // that interval has passed, so it holds only what nothing-changing costs.
  const int settle_s =
      std::stoi(FlagValue(install.operator_args(), "status-progress-interval-ms").value_or("0")) / 1000 + 5;
  Say("quiet: trainers paused; " + std::to_string(settle_s) + " s for progress already seen to be written, then " +
      std::to_string(quiet_s) + " s");
  standin.HoldSteps(true);
  Pause(settle_s);
  Result<WindowFigures> quiet = bench.Window(quiet_s);
  standin.HoldSteps(false);
  if (!quiet.ok()) return fail(quiet.error());
  report.quiet = *quiet;
  report.measured.push_back("quiet");

  Say("a tenth of the exporters turn bad (blackholed, or answering after 10 s)");
  tracker.SetBadExporters(true);
  if (Status s = bench.Restart(2); !s.ok()) return fail(s.message());
  if (Status s = bench.MeasureAttempt(2, true, report.bad); !s.ok()) return fail(s.message());
  report.measured.push_back("recommendations bad");
  Pause(10);
  Result<WindowFigures> bad_steady = bench.Window(window_s);
  if (!bad_steady.ok()) return fail(bad_steady.error());
  report.bad.steady = *bad_steady;
  report.measured.push_back("steady bad");
  for (const std::string& e : tracker.errors()) Say("stand-in (retried at its next sync): " + e);

  PrintReport(report);
  tracker.Stop();
  standin.Stop();
  return 0;
}
