// Whether a run's trainer found its compiled train step in the JAX compilation cache its
// practice lap filled (docs/practice-lap.md), judged from one pod's /steps answer, which holds
// both the lap's steps and the trainer's: MaxText's first step carries the compile of its train
// step, so a trainer whose program came from the cache steps first in a fraction of the time
// its lap's first step took. Measured on maxtext 0.2.5's tiny model (tests/maxtext_config/
// test_practice_lap.py and MaxTextLapOnNode print both first steps).
//
// No verdict (nullopt) unless the lap completed, both first steps are seen, and both are the
// same step (a fresh run's trainer starts where its lap did; a trainer that resumed, or whose
// first steps the exporter no longer holds, says nothing about the compile). Plain values in
// and out.
#pragma once

#include <optional>

#include "telemetry/step_log.h"

namespace graintune::op {

// A trainer's first step no longer than this share of its lap's first step found its compile
// in the cache; a recompile takes about what the lap's compile took.
inline constexpr double kCompileCacheHitShare = 0.5;

struct CompileCacheVerdict {
  double lap_first_step_seconds = 0;
  double trainer_first_step_seconds = 0;
  bool hit = false;
};

std::optional<CompileCacheVerdict> CompileCacheOf(const telemetry::StepsDocument& steps);

}  // namespace graintune::op
