// The reconcile steps about what graintune-launcher did in the pods (ReconcileTuning's steps 2b-2d,
// after RecordRunsAndPins; reconcile_steps.h lists them all): the practice lap's answer, whether
// the trainer after the lap found its compiled train step in the cache the lap filled, and what
// the start check saw at the trainer's start. Plain functions over values, as every step is.
#pragma once

#include <optional>
#include <vector>

#include "operator/reconcile_steps.h"

namespace graintune::op {

// 2b. The practice lap: the answer for the pods of an attempt that wait for their lap's. The
// answer status.lap records for the attempt, once there is one (written before any pod is
// patched, so every pod gets the same); else AnswerLaps (needs `in.inputs`), recorded in
// status.lap with a LapAnswered or LapGaveNoValue Event. nullopt: no pod waits, or its answer
// is not due yet.
std::optional<LapAnswerWrite> RecordLap(const ReconcileInput& in, const AttemptPods& attempts,
                                        workload::GrainTuningStatus& status,
                                        std::vector<EventToRecord>& events);

// 2c. Whether the laps' trainer found its train step in the JAX cache its lap filled: the first
// verdict a pod of status.lap's attempt reports (contract::LapResult::trainer_compile, in its
// exporter's lap), recorded once in status.lap with a LapTrainerCompile Event.
void RecordTrainerCompile(const ReconcileInput& in, workload::GrainTuningStatus& status,
                          std::vector<EventToRecord>& events);

// 2c'. The value each host of status.lap's attempt started its trainer with (its launcher's
// report, contract::LapResult::trainer_workers, in its exporter's lap): status.lap.startedHosts
// and startedValues, and a LapStartedMixedValues Event (Warning) the first time two hosts report
// different values: their checkpoints would hold Grain iterators of different counts.
void RecordLapStarts(const ReconcileInput& in, workload::GrainTuningStatus& status,
                     std::vector<EventToRecord>& events);

// 2d. What graintune's start check saw at the trainer's start (telemetry/start_check_report.h,
// in an exporter's /steps): the newest attempt's report is recorded once in status.startCheck,
// with an Event: StartCheckChangedValue (Warning) when the trainer started with another count
// than graintune wrote ("graintune wrote N; ... the trainer runs with M"), StartCheckFailedOpen
// (Warning) when the check could not read the start, else StartCheck (Normal).
void RecordStartCheck(const ReconcileInput& in, workload::GrainTuningStatus& status,
                      std::vector<EventToRecord>& events);

}  // namespace graintune::op
