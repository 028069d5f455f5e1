// Values the reconciler's tests share: the measured Llama3-8B inputs on a v6e host, a tuned
// pod, and the step shapes its exporter reports (data-bound after the buffer drains, or fed).
#pragma once

#include <string>

#include "operator/pod_facts.h"
#include "telemetry/step_log.h"
#include "tuner/dataset_profile.h"
#include "tuner/decision.h"
#include "tuner/machine_types.h"

namespace graintune::op {

// Llama3-8B on a v6e host as measured: 65536 tokens per step per host, 4.3 s compute steps,
// raw text at ~2.2k tokens/s per worker.
inline TuningInputs SeedInputs() {
  TuningInputs in;
  in.host = HostShapeOf(*FindMachineType("ct6e-standard-4t"));
  in.demand.tokens_per_step_per_host = 65536;
  in.demand.compute_step_seconds = 4.3;
  in.demand.tokens_per_second_per_host = 65536 / 4.3;
  in.demand.element_bytes = 65536 * 6 * 4;
  in.demand.basis = "test";
  in.profile = DefaultProfile(DatasetKind::kRawText);
  return in;
}

inline PodFacts Pod(int attempt, int workers, const std::string& phase = "Running", bool oom = false) {
  PodFacts p;
  p.ns = "default";
  p.name = "llama-" + std::to_string(attempt);
  p.tuning_key = "llama";
  p.attempt = attempt;
  p.workers = workers;
  p.phase = phase;
  p.oom_killed = oom;
  p.owner_kind = "JobSet";
  p.owner_name = "llama";
  return p;
}

// The measured 4-worker shape: compile, fast while the buffer lasts, then data-bound.
inline telemetry::StepsDocument DataBoundSteps(int n) {
  telemetry::StepsDocument d;
  for (int s = 1; s <= n; ++s)
    d.steps.push_back({s, s == 1 ? 30.0 : (s <= 8 ? 4.3 : 7.4 + 0.05 * (s % 3)), 60, 3000});
  return d;
}

inline telemetry::StepsDocument FedSteps(int n) {
  telemetry::StepsDocument d;
  for (int s = 1; s <= n; ++s) d.steps.push_back({s, s == 1 ? 30.0 : 4.3 + 0.01 * (s % 2), 195, 7600});
  return d;
}

}  // namespace graintune::op
