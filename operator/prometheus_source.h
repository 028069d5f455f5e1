// The operator's second metrics source: the Prometheus HTTP query API, for clusters whose
// Prometheus already scrapes the exporters (ServiceMonitor / PodMonitoring with a `pod_uid`
// target label). A trial is built from graintune_exporter_step_duration_seconds over the later
// half of the pod's run (steady state: mean, p10/p50/p90, samples) and the earlier half (the pace
// while the prefetch buffer lasted, and whether the later half is clearly slower: a drain).
#pragma once

#include <string>

#include "kube/client.h"
#include "tuner/trial.h"

namespace graintune::op {

// One instant query's scalar result (the first series' value); error on any failure or when the
// query returns nothing.
Result<double> PrometheusScalar(kube::Client& prometheus, const std::string& promql);

Result<Trial> TrialFromPrometheus(kube::Client& prometheus, const std::string& pod_uid,
                                  double run_seconds, int attempt, int workers,
                                  double tokens_per_step_per_host);

}  // namespace graintune::op
