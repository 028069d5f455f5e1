// One Prometheus histogram read from a text exposition (a /metrics page), and the quantiles of
// what was observed between two readings. The scale benchmark reads the webhook's own
// graintune_webhook_request_duration_seconds and the API server's
// apiserver_admission_webhook_admission_duration_seconds around the admission bursts, to tell
// the webhook's own time from the time its call takes on a loaded machine.
//
// A quantile is known only to a bucket: QuantileBound says under which bucket bound the q-th
// observation falls. Lines that do not parse are skipped; an absent histogram reads as empty.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graintune::bench {

struct HistogramReading {
  std::map<double, double> cumulative;  // bucket bound (le; +Inf as infinity) -> observations

  double Count() const { return cumulative.empty() ? 0 : cumulative.rbegin()->second; }
  // What was observed after `earlier` (the same histogram read before).
  HistogramReading Since(const HistogramReading& earlier) const;
  // The smallest bound under which at least q (0..1] of the observations fall; nullopt when
  // there are none.
  std::optional<double> QuantileBound(double q) const;
  // The share of observations at or under `bound` (a bucket bound); 0 when there are none.
  double ShareUnder(double bound) const;
};

// The `name`_bucket series of `exposition` whose label text holds every string of
// `label_parts` (e.g. `operation="CREATE"`), summed across series.
HistogramReading ReadHistogram(const std::string& exposition, const std::string& name,
                               const std::vector<std::string>& label_parts = {});

// The samples of counter `name` with one label `label`, by that label's value (e.g. the
// webhook's graintune_webhook_connections_shed_total by reason); empty when absent.
std::map<std::string, double> ReadCounterByLabel(const std::string& exposition, const std::string& name,
                                                 const std::string& label);

}  // namespace graintune::bench
