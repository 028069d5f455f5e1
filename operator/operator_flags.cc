#include "operator/operator_flags.h"

namespace graintune::op {
namespace {

using server::FlagSpec;

std::vector<FlagSpec> OperatorFlags() {
  return {
      {.name = "kubeconfig", .value_name = "K", .help = "API access (else in-cluster, $KUBECONFIG or ~/.kube/config)"},
      {.name = "leader-elect", .default_text = "true", .help = "elect a leader through a Lease (=false: always lead)"},
      {.name = "lease-namespace", .value_name = "NS", .help = "the Lease's namespace (default: the configuration's)"},
      {.name = "lease-name", .value_name = "N", .default_text = "graintune-operator", .help = "the Lease's name"},
      {.name = "identity", .value_name = "ID", .help = "this replica in the Lease (default: host name and pid)"},
      {.name = "resync-period-ms", .value_name = "N", .default_text = "5000",
       .help = "a running attempt's steps are read this often"},
      {.name = "status-progress-interval-ms", .value_name = "N", .default_text = "30000",
       .help = "a trial's progress is written at most this often (0: every change)"},
      {.name = "bind-address", .value_name = "A", .default_text = "0.0.0.0", .help = "address of the health port"},
      {.name = "port", .value_name = "N", .default_text = "8081", .help = "/healthz, /readyz and /metrics (HTTP)"},
      {.name = "scrape-timeout-ms", .value_name = "N", .default_text = "3000", .help = "to read one exporter"},
      {.name = "scrape-concurrency", .value_name = "N", .default_text = "8", .help = "exporters read at once"},
      {.name = "lease-duration-ms", .value_name = "N", .default_text = "15000",
       .help = "a leader that has not renewed for this long is replaced"},
      {.name = "renew-deadline-ms", .value_name = "N", .default_text = "10000",
       .help = "a leader that cannot renew for this long stops leading"},
      {.name = "retry-period-ms", .value_name = "N", .default_text = "2000", .help = "between tries to lead or renew"},
      {.name = "prometheus-url", .value_name = "http(s)://HOST:PORT",
       .help = "trials from this Prometheus instead of the exporters"},
      {.name = "forget-after", .value_name = "D", .default_text = "0",
       .help = "delete GrainTunings without pods or activity for this long, e.g. 720h (0: never)"}};
}

// An integer flag in [lo, hi] as milliseconds.
Status Milliseconds(const server::Flags& flags, const char* name, int lo, int hi,
                    std::chrono::milliseconds& out) {
  Result<std::optional<int>> v = flags.IntegerIn(name, lo, hi);
  if (!v.ok()) return v.status();
  out = std::chrono::milliseconds(**v);
  return Status::Ok();
}

}  // namespace

const server::ServerCommand& OperatorCommand() {
  static const server::ServerCommand kCommand{
      .program = "graintune-operator",
      .summary = "records each attempt's trial and sets the next attempt's value.",
      .flags = OperatorFlags()};
  return kCommand;
}

Result<OperatorConfig> OperatorConfigFromFlags(const server::Flags& flags) {
  OperatorConfig c;
  c.kubeconfig = flags.Get("kubeconfig").value_or("");
  c.leader_elect = flags.Bool("leader-elect");
  c.lease = {.lease_namespace = flags.Get("lease-namespace").value_or(""),
             .lease_name = *flags.Get("lease-name"),
             .identity = flags.Get("identity").value_or("")};
  c.prometheus_url = flags.Get("prometheus-url").value_or("");
  c.http.bind_address = *flags.Get("bind-address");
  c.http.threads = 1;
  c.http.max_body_bytes = 4096;
  for (Status s : {Milliseconds(flags, "resync-period-ms", 100, 3600000, c.controller.running_requeue),
                   Milliseconds(flags, "status-progress-interval-ms", 0, 3600000,
                                c.controller.progress_write_interval),
                   Milliseconds(flags, "scrape-timeout-ms", 100, 60000, c.controller.scrape_timeout),
                   Milliseconds(flags, "lease-duration-ms", 1000, 600000, c.lease.lease_duration),
                   Milliseconds(flags, "renew-deadline-ms", 500, 600000, c.lease.renew_deadline),
                   Milliseconds(flags, "retry-period-ms", 100, 600000, c.lease.retry_period)})
    if (!s.ok()) return s;
  Result<std::optional<int>> port = flags.IntegerIn("port", 1, 65535);
  Result<std::optional<int>> concurrency = flags.IntegerIn("scrape-concurrency", 1, 64);
  Result<std::optional<std::chrono::seconds>> forget = flags.Duration("forget-after");
  if (!port.ok()) return port.status();
  if (!concurrency.ok()) return concurrency.status();
  if (!forget.ok()) return forget.status();
  c.http.port = static_cast<unsigned short>(**port);
  c.controller.scrape_concurrency = **concurrency;
  c.controller.forget_after = **forget;
  if (c.leader_elect) {
    kube::LeaderElectionConfig check = c.lease;  // its names are filled in later
    check.lease_namespace = check.identity = "-";
    if (Status s = kube::ValidateLeaderElection(check); !s.ok()) return s;
  }
  return c;
}

}  // namespace graintune::op
