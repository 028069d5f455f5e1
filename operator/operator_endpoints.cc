#include "operator/operator_endpoints.h"

#include <prometheus/text_serializer.h>

#include "operator/tuning_metrics.h"

namespace graintune::op {

OperatorEndpoints::OperatorEndpoints(const TuningController& controller, const ControllerCaches& caches,
                                     const std::atomic<bool>& leading)
    : controller_(controller), caches_(caches), leading_(leading),
      counters_(prometheus::BuildCounter()
                    .Name("graintune_operator_total")
                    .Help("Operator activity by kind (reconciles, scrapes, writes, events, "
                          "attempts that ended early)")
                    .Register(*registry_)),
      leader_(prometheus::BuildGauge()
                  .Name("graintune_operator_leader")
                  .Help("1 while this replica leads")
                  .Register(*registry_)
                  .Add({})),
      queue_(prometheus::BuildGauge()
                 .Name("graintune_operator_queue_keys")
                 .Help("Tuning keys in the work queue, by state (ready, delayed, processing)")
                 .Register(*registry_)),
      exporters_(prometheus::BuildGauge()
                     .Name("graintune_operator_exporters")
                     .Help("Exporters being read now (in_flight) and whose last read failed (backing_off)")
                     .Register(*registry_)) {}

server::HttpResponse OperatorEndpoints::Handle(const server::HttpRequest& request) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  if (path == "/readyz")
    return caches_.Synced() ? server::HttpResponse{200, "text/plain", "ok\n"}
                            : server::HttpResponse{503, "text/plain", "caches not synced\n"};
  if (path == "/metrics") return Metrics();
  return {404, "text/plain", "not found\n"};
}

server::HttpResponse OperatorEndpoints::Metrics() {
  std::lock_guard<std::mutex> lock(mu_);
  const ControllerCounters& c = controller_.counters();
  const std::map<std::string, double> now = {
      {"reconcile", c.reconciles}, {"reconcile_error", c.reconcile_errors},
      {"scrape", c.scrapes}, {"scrape_error", c.scrape_errors},
      {"status_write", c.status_writes}, {"status_progress_deferred", c.progress_deferred},
      {"event", c.events}, {"forgotten", c.forgotten}, {"ended_early", c.ended_early},
      {"rejected_answer", c.rejected_answers}, {"lap_answer", c.lap_answers}};
  for (const auto& [kind, v] : now) {
    counters_.Add({{"kind", kind}}).Increment(v - exported_[kind]);
    exported_[kind] = v;
  }
  leader_.Set(leading_ ? 1 : 0);
  const WorkQueueDepth depth = controller_.queue_depth();
  queue_.Add({{"state", "ready"}}).Set(static_cast<double>(depth.ready));
  queue_.Add({{"state", "delayed"}}).Set(static_cast<double>(depth.delayed));
  queue_.Add({{"state", "processing"}}).Set(static_cast<double>(depth.processing));
  const ScraperFigures scraping = controller_.scraper_figures();
  exporters_.Add({{"state", "in_flight"}}).Set(scraping.in_flight);
  exporters_.Add({{"state", "backing_off"}}).Set(scraping.backing_off);
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& f : TuningMetricFamilies(caches_.graintunings->List()))
    families.push_back(std::move(f));
  return {200, "text/plain; version=0.0.4", prometheus::TextSerializer().Serialize(families)};
}

}  // namespace graintune::op
