// How a practice lap ended: the result file graintune-launcher writes (--result-file) and
// graintune's exporter reads and serves in its /steps document's lap (telemetry/lap_report.h):
//   {"completed": true, "outcome": "completed", "wall_seconds": 39.8, "steps": 60, "workers": 2,
//    "trainer_compile": "cache hit", "trainer_workers": 6,
//    "trainer_value_why": "the run's value from its practice lap"}
// "trainer_workers" is the grain_worker_count the launcher started the trainer with, and
// "trainer_value_why" why that one (the lap's answer, or admission's value and the reason): the
// launcher adds them once it knows, just before it execs the trainer; absent until then.
// "trainer_compile" (with "trainer_compile_why" when "unknown") says "watching" while the
// launcher's watcher waits for the trainer's first step, and its verdict once it has one
// (contract/trainer_compile.h); it is absent when nothing watches.
// Reading is bounded: the file is written inside a pod its owner controls. Pure; linked by the
// static launcher and by the exporter.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "contract/trainer_compile.h"

namespace graintune::contract {

struct LapResult {
  bool completed = false;   // exited 0
  std::string outcome;      // "completed", "exited 1", "killed by signal 9", "timed out after 60 s"
  double wall_seconds = 0;
  int steps = 0;            // the steps it was asked to run
  int workers = 0;          // the grain_worker_count it ran with
  // Whether the trainer after it found its train step in the cache the lap filled; nullopt until
  // the launcher's watcher judged it (or when nothing watches).
  std::optional<TrainerCompileVerdict> trainer_compile;
  // The launcher left a watcher whose verdict is still to come ("trainer_compile": "watching").
  bool trainer_compile_watching = false;
  // The value the launcher started the trainer with, and why; nullopt until it did.
  std::optional<int> trainer_workers;
  std::string trainer_value_why;
};

// What a result may hold (far above any lap: practice laps are bounded in steps and time).
inline constexpr size_t kMaxLapOutcomeBytes = 256;  // also trainer_compile_why, trainer_value_why
inline constexpr double kMaxLapWallSeconds = 86400;
inline constexpr double kMaxLapSteps = 1e6;
inline constexpr double kMaxLapWorkers = 100000;

nlohmann::json ToJson(const LapResult& result);

// From the JSON object; an error names the field that is wrong.
Result<LapResult> ReadLapResult(const nlohmann::json& result);
// From the file's text; an error says what is wrong with it.
Result<LapResult> ParseLapResult(const std::string& text);

}  // namespace graintune::contract
