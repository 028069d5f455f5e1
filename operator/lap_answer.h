// The operator's half of the practice lap (docs/practice-lap.md), as a pure function: from the
// laps the exporters of one attempt's pods reported, the one answer every pod of the attempt is
// given in its graintune.dev/lap-value annotation, which its graintune-launcher reads: "N" (the
// run's value, DecideFromLaps over every host's lap) or "none: why" (the trainer keeps
// admission's value).
//
// Rules:
//  - One answer per attempt: a pod of the attempt already answered gives its answer to the rest
//    (a pod created after the others' laps ended, or a patch that reached only some pods).
//  - Any host's lap that failed (OOM kill, crash, timeout) answers "none" at once.
//  - Otherwise the answer waits until every pod awaiting one has its lap's result; then each
//    lap is summarised as a trial is (TrialFromSteps, warm-up dropped) and DecideFromLaps decides.
//  - A launcher waits `lap_answer_wait_seconds` after its lap, then starts its trainer with
//    admission's value: an answer that could reach it after that would name a value the trainer
//    does not run with. So once the oldest result is older than that wait less kAnswerMargin
//    (the scrape's age, the patch and the kubelet's refresh of the downward-API file), the
//    answer is "none: ... too late", which changes nothing a launcher does.
// The pods are untrusted: their reports are already bounded (telemetry/lap_report.h); a report
// that cannot be summarised is "none" with why. Plain values in and out; no clock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/pod_facts.h"
#include "telemetry/lap_report.h"
#include "tuner/decision.h"
#include "tuner/practice_lap.h"

namespace graintune::op {

// What the answer must leave of a launcher's wait.
inline constexpr double kAnswerMarginSeconds = 30;

struct LapAnswer {
  std::string text;                   // the annotation's value: "N" or "none: why"
  std::optional<Decision> decision;   // when text is a value
  std::vector<LapFigures> laps;       // every host's, in the pods' order (when all reported)
  double wall_seconds = 0;            // the longest lap
};

// `pods`: the pods of one attempt (any state); `reports`: pod uid -> the lap its exporter
// reported; `inputs`: the decision inputs read from the attempt's pods; `warmup_steps`: steps
// a trial drops. nullopt: no answer yet (a lap still runs, or no pod awaits one).
std::optional<LapAnswer> AnswerLaps(const std::vector<PodFacts>& pods,
                                    const std::map<std::string, telemetry::LapReport>& reports,
                                    const TuningInputs& inputs, int warmup_steps);

}  // namespace graintune::op
