// The planner's decisions for the trainer's wing (webhook/worker_count_planner.h): whether a run's
// trainer starts through graintune-launcher, with a practice lap (policy spec.lap,
// docs/practice-lap.md) or the start check (policy spec.startCheck, docs/start-check.md), and the
// pod spec that does it (webhook/lap_injection.h). Each writes into the object it is given and
// says in the Plan what it did, or why not. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/policy.h"
#include "webhook/exporter_injection.h"
#include "webhook/lap_injection.h"
#include "webhook/planner_sites.h"
#include "webhook/worker_count_planner.h"
#include "workload/tuning_inputs.h"

namespace graintune::webhook::planner {

// The practice lap this attempt runs under `policy` (spec.lap), or nullopt with plan.lap saying
// why not (empty when the policy asks for no lap). A lap sizes a run's one value, so only the
// first attempt of a run that keeps its value and whose value admission decided (no run record,
// no recommendation) runs one; the exporter measures it. Only a lap within the policy's
// lap.maxRunShare of the run's steps runs (tuner LapRefusal): `hosts`, the slice's data hosts when
// known, gives its cost in chip-hours.
std::optional<LapSettings> LapFor(const Policy& policy, const TuningInputs& inputs,
                                  const std::string& ns, const ContainerSites& trainer,
                                  const ExporterInjection* exporter, std::optional<long> hosts, Plan& plan);

// Whether the start check can take the -1s graintune leaves as written (docs/start-check.md): it
// is on, the exporter is there to hear what it saw, and the run's trainer is a regular
// container with a command of its own (or one a template already wrapped) whose training
// count is among those -1s.
bool StartCheckCanFill(const json& object, const std::vector<TemplateSites>& found, const Policy& policy,
                       const ExporterInjection* exporter);

// graintune-launcher in front of the trainer `trainer` of template `t` (the exporter is already
// in it), the planner's one call for the trainer's wing: a template that carries the launcher
// (its JobSet's, wrapped for attempt 0) gets this attempt's answer ("none" after attempt 0) or
// this attempt's start-check value; else the practice lap (`lap`, for the run's deciding trainer,
// when nothing is left to the start check), else the start check (`start_check`). `fill_at_start`:
// the trainer's -1s are left as written for the start check to fill with plan.workers, and the
// findings say so (Finding::start_fill). plan.lap and plan.start_check say what was done or why not.
void WrapTrainer(json& object, const std::vector<TemplateSites>& found, const TemplateSites& t,
                 const ContainerSites& trainer, const ExporterInjection& exporter,
                 const std::optional<LapSettings>& lap, bool start_check, bool fill_at_start, Plan& plan);

// A pod graintune leaves as written whose trainer carries the launcher (its Job or JobSet
// template got a lap for attempt 0) runs no lap in a later attempt: its answer, "none", is set
// before it starts (graintune-launcher then starts the trainer at once).
void AnswerNoLap(json& object, int attempt, Plan& plan);

}  // namespace graintune::webhook::planner
