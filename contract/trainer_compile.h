// Whether a trainer found its train step in the JAX compilation cache its practice lap filled, as
// graintune-launcher judges it and writes it into the lap's result file ("trainer_compile"), the
// exporter serves it in its /steps document's lap, and the operator records it in status.lap.
//
// MaxText 0.2.5 compiles its train step ahead of its loop and writes each program it compiles into
// its jax_cache_dir as an entry named "jit_train_step-<key>"; its log and its metrics look the same
// for a hit and a miss. So the verdict is read from the cache folder: the train steps it holds as
// the trainer starts, and again once the trainer wrote its first step.
//   cache hit  the lap left a train step there and the trainer added none: it ran the lap's program
//   compiled   the trainer added a train step: its program differs from the lap's (another
//              learning-rate schedule, say), and the lap's compile saved nothing
//   unknown    anything else, with why: the lap left no train step (it ended before its compile,
//              or the cache is not a local folder), or the trainer never wrote a step
// Header only, in the contract library that graintune-launcher (a static binary) links.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace graintune::contract {

enum class TrainerCompile { kCacheHit, kCompiled, kUnknown };

// Each verdict's names: in files and documents, and in the GrainTuning's
// status.lap.trainerCompile (the CRD's enum).
struct TrainerCompileNames {
  TrainerCompile verdict;
  std::string_view name, status_name;
};
inline constexpr TrainerCompileNames kTrainerCompileNames[] = {
    {TrainerCompile::kCacheHit, "cache hit", "CacheHit"},
    {TrainerCompile::kCompiled, "compiled", "Compiled"},
    {TrainerCompile::kUnknown, "unknown", "Unknown"},
};

constexpr const TrainerCompileNames& NamesOf(TrainerCompile verdict) {
  for (const TrainerCompileNames& n : kTrainerCompileNames)
    if (n.verdict == verdict) return n;
  return kTrainerCompileNames[2];  // kUnknown
}

// Its name in files and documents: "cache hit", "compiled", "unknown".
constexpr std::string_view TrainerCompileName(TrainerCompile verdict) { return NamesOf(verdict).name; }

// Its name in status.lap.trainerCompile: "CacheHit", "Compiled", "Unknown".
constexpr std::string_view TrainerCompileStatusName(TrainerCompile verdict) { return NamesOf(verdict).status_name; }

// The verdict a name gives; nullopt for any other text.
constexpr std::optional<TrainerCompile> ParseTrainerCompile(std::string_view name) {
  for (const TrainerCompileNames& n : kTrainerCompileNames)
    if (n.name == name) return n.verdict;
  return std::nullopt;
}

// What the result file's "trainer_compile" says while the launcher's watcher is still to judge
// (it started one): the exporter re-reads the file only then.
inline constexpr std::string_view kTrainerCompileWatching = "watching";

// Whether a cache entry's name is one of a compiled MaxText train step.
inline bool IsTrainStepEntry(std::string_view name) { return name.starts_with("jit_train_step"); }

struct TrainerCompileVerdict {
  TrainerCompile verdict = TrainerCompile::kUnknown;
  std::string why;  // for kUnknown
  bool operator==(const TrainerCompileVerdict&) const = default;
};

// The verdict from the cache's train-step entries as the trainer started (`before`) and once it
// wrote its first step (`at_first_step`, nullopt: it never did).
inline TrainerCompileVerdict JudgeTrainerCompile(const std::set<std::string>& before,
                                                 const std::optional<std::set<std::string>>& at_first_step) {
  if (before.empty())
    return {TrainerCompile::kUnknown, "the lap left no compiled train step in the JAX cache"};
  if (!at_first_step) return {TrainerCompile::kUnknown, "the trainer wrote no step"};
  for (const std::string& entry : *at_first_step)
    if (!before.contains(entry)) return {TrainerCompile::kCompiled, ""};
  return {TrainerCompile::kCacheHit, ""};
}

}  // namespace graintune::contract
