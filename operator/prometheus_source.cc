#include "operator/prometheus_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace graintune::op {
namespace {

std::string Window(long seconds) { return "[" + std::to_string(seconds) + "s]"; }

}  // namespace

Result<double> PrometheusScalar(kube::Client& prometheus, const std::string& promql) {
  kube::ApiResult<std::string> body =
      prometheus.GetRaw("/api/v1/query?query=" + kube::EncodeQueryValue(promql));
  if (!body.ok()) return Status::Error("prometheus query '" + promql + "': " + body.error().ToString());
  const kube::Json doc = kube::Json::parse(*body, nullptr, false);
  if (doc.is_discarded() || doc.value("status", "") != "success")
    return Status::Error("prometheus query '" + promql + "' failed: " + body->substr(0, 300));
  const kube::Json result = doc.value("data", kube::Json::object()).value("result", kube::Json::array());
  if (!result.is_array() || result.empty()) return Status::Error("prometheus query '" + promql + "' returned nothing");
  const kube::Json value = result[0].value("value", kube::Json::array());
  if (!value.is_array() || value.size() != 2 || !value[1].is_string())
    return Status::Error("prometheus query '" + promql + "': unexpected result shape");
  const double v = std::strtod(value[1].get<std::string>().c_str(), nullptr);
  if (!std::isfinite(v)) return Status::Error("prometheus query '" + promql + "' is not a finite number");
  return v;
}

Result<Trial> TrialFromPrometheus(kube::Client& prometheus, const std::string& pod_uid,
                                  double run_seconds, int attempt, int workers,
                                  double tokens_per_step_per_host) {
  const long half = static_cast<long>(run_seconds / 2);
  if (half < 2) return Status::Error("the pod has not run long enough");
  const std::string sel = "{pod_uid=\"" + pod_uid + "\"}";
  const std::string metric = "graintune_exporter_step_duration_seconds";
  auto increase = [&](const std::string& series, const std::string& offset) {
    return "sum(increase(" + metric + series + sel + Window(half) + offset + "))";
  };
  auto quantile = [&](double q, const std::string& offset) {
    char qs[16];
    std::snprintf(qs, sizeof(qs), "%.2f", q);
    return "histogram_quantile(" + std::string(qs) + ", sum by (le) (increase(" + metric +
           "_bucket" + sel + Window(half) + offset + ")))";
  };
  const std::string earlier = " offset " + std::to_string(half) + "s";
  Result<double> count = PrometheusScalar(prometheus, increase("_count", ""));
  if (!count.ok()) return count.status();
  Result<double> sum = PrometheusScalar(prometheus, increase("_sum", ""));
  if (!sum.ok()) return sum.status();
  if (*count < 1) return Status::Error("no steps in the steady window yet");
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.samples = static_cast<int>(std::lround(*count));
  t.step_seconds_mean = *sum / *count;
  Result<double> p10 = PrometheusScalar(prometheus, quantile(0.10, ""));
  Result<double> p50 = PrometheusScalar(prometheus, quantile(0.50, ""));
  Result<double> p90 = PrometheusScalar(prometheus, quantile(0.90, ""));
  if (!p10.ok() || !p50.ok() || !p90.ok()) return Status::Error("histogram quantiles unavailable");
  t.step_seconds_p50 = *p50;
  t.step_seconds_p90 = *p90;
  t.step_spread = *p50 > 0 ? (*p90 - *p10) / *p50 : 0;
  t.tokens_per_second_per_host = t.step_seconds_mean > 0 ? tokens_per_step_per_host / t.step_seconds_mean : 0;
  t.stall_fraction = t.step_seconds_mean > 0 ? std::clamp(1.0 - *p10 / t.step_seconds_mean, 0.0, 1.0) : 0;
  // The earlier half: its lower quartile is the pace while the buffer lasted (robust to the
  // compile step in it); a later half clearly slower than that is a drained buffer.
  if (Result<double> q25 = PrometheusScalar(prometheus, quantile(0.25, earlier)); q25.ok() && *q25 > 0) {
    t.buffered_step_seconds = *q25;
    t.draining = t.step_seconds_mean > kDrainSlowdown * *q25;
  }
  return t;
}

}  // namespace graintune::op
