#include "webhook/webhook_metrics.h"

#include <prometheus/text_serializer.h>

namespace graintune::webhook {

WebhookMetrics::WebhookMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("graintune_webhook_requests_total")
                   .Help("Admission requests by object kind and outcome")
                   .Register(*registry_);
  latency_ = &prometheus::BuildHistogram()
                  .Name("graintune_webhook_request_duration_seconds")
                  .Help("Time to answer one admission request")
                  .Register(*registry_)
                  .Add({}, prometheus::Histogram::BucketBoundaries{
                               0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1});
  mutations_ = &prometheus::BuildCounter()
                    .Name("graintune_webhook_mutations_total")
                    .Help("grain_worker_count values written")
                    .Register(*registry_)
                    .Add({});
  over_budget_ = &prometheus::BuildCounter()
                      .Name("graintune_webhook_over_budget_total")
                      .Help("Admission requests allowed unchanged because they were over the "
                            "per-request work budget, by the budget spent (values, sites, time)")
                      .Register(*registry_);
  connections_shed_ = &prometheus::BuildCounter()
                           .Name("graintune_webhook_connections_shed_total")
                           .Help("Connections to the admission port closed at accept (refused_full: "
                                 "every open one carried a request) or reclaimed (idle_over_share, "
                                 "slow_over_share: the address held too many idle or slow ones; "
                                 "reclaimed_for_room: an idle one closed at the ceiling for a new one)")
                           .Register(*registry_);
  for (const char* reason : {"refused_full", "idle_over_share", "slow_over_share", "reclaimed_for_room"})
    connections_shed_->Add({{"reason", reason}});
}

void WebhookMetrics::ConnectionShed(const std::string& reason) {
  connections_shed_->Add({{"reason", reason}}).Increment();
}

void WebhookMetrics::Observe(const std::string& kind, const std::string& outcome, double seconds,
                             int mutations, const std::string& over_budget) {
  requests_->Add({{"kind", kind}, {"outcome", outcome}}).Increment();
  if (!over_budget.empty()) over_budget_->Add({{"budget", over_budget}}).Increment();
  latency_->Observe(seconds);
  if (mutations > 0) mutations_->Increment(mutations);
}

std::string WebhookMetrics::Exposition() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace graintune::webhook
