// The operator's health port: /healthz (the process answers), /readyz (its caches have synced)
// and /metrics (graintune_operator_total by kind, graintune_operator_leader, the work queue's
// and the scraper's gauges, and the GrainTunings' series of tuning_metrics.h), in Prometheus'
// text format. Anything else is 404.
//
// Thread-safety: Handle may be called from the server's threads at once; counters are exported
// under a lock (a counter's increment is its change since the last scrape).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "operator/tuning_controller.h"
#include "server/https_server.h"

namespace graintune::op {

class OperatorEndpoints {
 public:
  // `leading`: whether this replica leads now. All three outlive this object.
  OperatorEndpoints(const TuningController& controller, const ControllerCaches& caches,
                    const std::atomic<bool>& leading);

  server::HttpResponse Handle(const server::HttpRequest& request);

 private:
  server::HttpResponse Metrics();

  const TuningController& controller_;
  const ControllerCaches& caches_;
  const std::atomic<bool>& leading_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& counters_;
  prometheus::Gauge& leader_;
  prometheus::Family<prometheus::Gauge>& queue_;
  prometheus::Family<prometheus::Gauge>& exporters_;
  std::mutex mu_;
  std::map<std::string, double> exported_;  // under mu_
};

}  // namespace graintune::op
