// What the GrainTunings hold, as Prometheus gauges for dashboards (the chart's Grafana
// dashboard reads them): one series per trial, labelled by the GrainTuning and the attempt,
// and one per GrainTuning for the value its next attempt gets.
//
//   graintune_trial_workers{graintuning_namespace, graintuning, attempt}
//   graintune_trial_step_seconds{...}        mean steady-state step time (measured trials only)
//   graintune_trial_tflops_per_device{...}   TFLOP/s per chip (when MaxText reported it)
//   graintune_trial_data_bound{...}          1 when the chips waited for data (measured trials)
//   graintune_trial_oom_killed{...}          1 when a pod of the attempt was OOMKilled
//   graintune_recommended_workers{graintuning_namespace, graintuning, attempt}
//                                            the recommendation and the attempt it is for
//   graintune_lap_gave_value{..., attempt}   1 when the attempt's practice lap gave its run a
//                                            value (status.lap), 0 when it gave none
//   graintune_lap_workers{...}               that value; graintune_lap_admission_workers the
//                                            value the laps ran with; graintune_lap_seconds
//                                            the longest lap's wall time
//   graintune_lap_trainer_compile_cache_hit{...}  1 when the trainer found its train step in the
//                                            JAX cache the lap filled, 0 when it compiled its
//                                            own (absent while unknown)
//
// The namespace label is not called `namespace` so that Prometheus keeps it beside the
// operator pod's own target label. Every replica exports the same series (they read the same
// cache), so queries aggregate with max by (...).
//
// Pure: GrainTunings as the API server serves them (checked against the CRD's schema) in,
// metric families out (prometheus-cpp's types, for its TextSerializer). An absent field leaves
// its series out. Linear in the objects' trials (the CRD caps them at 64 per GrainTuning).
#pragma once

#include <prometheus/metric_family.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace graintune::op {

std::vector<prometheus::MetricFamily> TuningMetricFamilies(
    const std::vector<nlohmann::json>& grain_tunings);

}  // namespace graintune::op
