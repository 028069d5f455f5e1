// The webhook's Prometheus metrics (prometheus-cpp types, text exposition format):
//   graintune_webhook_requests_total{kind, outcome}
//   graintune_webhook_request_duration_seconds (histogram)
//   graintune_webhook_mutations_total
//   graintune_webhook_over_budget_total{budget}   (values | sites | time: work_budget.h)
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
  std::string Exposition() const;  // text format 0.0.4

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Histogram* latency_;
  prometheus::Counter* mutations_;
  prometheus::Family<prometheus::Counter>* over_budget_;
};

}  // namespace graintune::webhook
