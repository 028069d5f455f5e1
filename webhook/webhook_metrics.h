// The webhook's Prometheus metrics (prometheus-cpp types, text exposition format):
//   graintune_webhook_requests_total{kind, outcome}
//   graintune_webhook_request_duration_seconds (histogram)
//   graintune_webhook_mutations_total
//   graintune_webhook_over_budget_total{budget}   (values | sites | time: work_budget.h)
//   graintune_webhook_connections_shed_total{reason}   connections closed at accept or
//       reclaimed by the connection budget (server/connection_budget.h): refused_full,
//       idle_over_share, slow_over_share, reclaimed_for_room; each present from the start at 0
// Thread-safe (prometheus-cpp metrics are).
#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace graintune::webhook {

class WebhookMetrics {
 public:
  WebhookMetrics();
  // `over_budget`: the budget a request spent, "" when none.
  void Observe(const std::string& kind, const std::string& outcome, double seconds, int mutations,
               const std::string& over_budget = "");
  // A connection closed at accept or reclaimed; `reason`: server::ShedReasonName.
  void ConnectionShed(const std::string& reason);
  std::string Exposition() const;  // text format 0.0.4

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Histogram* latency_;
  prometheus::Counter* mutations_;
  prometheus::Family<prometheus::Counter>* over_budget_;
  prometheus::Family<prometheus::Counter>* connections_shed_;
};

}  // namespace graintune::webhook
