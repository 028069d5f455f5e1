// Keeping a planned value within what the trainer's MaxText accepts where -1 would have started
// (workload/maxtext_limits.h: 1 for hf, the files per data host for tfrecord and parquet), and
// splitting it with the eval pipeline. Pure.
#pragma once

#include <optional>

#include "webhook/planner_sites.h"
#include "webhook/worker_count_planner.h"
#include "workload/tuning_inputs.h"

namespace graintune::webhook::planner {

// The hosts that load data for the trainer of template `t` (a JobSet's replicatedJob replicas x
// its Job's parallelism, a Job's parallelism, a bare Pod 1), or what graintune wrote on the pod
// template of its Job or JobSet; nullopt when it cannot tell.
std::optional<long> DataHosts(const json& object, WorkloadKind kind, const TemplateSites& t);

// Splits plan.workers with the eval pipeline when there is one, and keeps the value within what
// MaxText accepts where -1 would have started; false when MaxText must pick (the limit cannot be
// told). `hosts_annotated`: the data hosts to record on a Job or JobSet, when they were read.
bool FitToMaxText(const json& object, WorkloadKind kind, const TemplateSites& primary,
                  const ContainerSites& trainer, const TuningInputs& inputs, bool has_eval,
                  Plan& plan, std::optional<long>& hosts_annotated);

}  // namespace graintune::webhook::planner
