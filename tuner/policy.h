// Policy: the platform team's bounds and preferences for one workload (a GrainTunePolicy, or
// the built-in defaults below). Plain value type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune {

enum class Objective {
  kThroughput,     // maximise throughput; extra idle workers are acceptable
  kFewestWorkers,  // the fewest workers that keep the chips fed
};

std::string ToString(Objective objective);
Result<Objective> ParseObjective(const std::string& text);  // "Throughput" | "FewestWorkers"

// How far graintune may act on the workloads a policy covers.
enum class Mode {
  kAuto,     // re-pick at every new attempt
  kInitial,  // set once at first admission, then keep
  kOff,      // recommend only (status, warnings), never mutate
};
std::string ToString(Mode mode);
Result<Mode> ParseMode(const std::string& text);

// Whose learned figures (a dataset's per-worker rate and memory, a demand key's measured
// demand) a workload's pick may use. Those measured in its own namespace always; besides them,
// those of `namespaces`, or of every namespace when `all_namespaces`. Namespaces are plain names.
struct LearningScope {
  std::vector<std::string> namespaces;  // besides the workload's own; at most kMaxSharedNamespaces
  bool all_namespaces = false;

  // Whether figures measured in `measured_in` may be used for a workload in `own`.
  bool Includes(const std::string& own, const std::string& measured_in) const;
  // "namespace team-b", "namespaces team-b, team-a", "every namespace", for people.
  std::string Describe(const std::string& own) const;
};
inline constexpr size_t kMaxSharedNamespaces = 256;

// spec.lap: whether a run that will keep its value first runs a practice lap of its own command
// (tuner/practice_lap.h, docs/practice-lap.md), and its bounds.
struct LapPolicy {
  enum class Mode {
    kOff,       // no lap: the run keeps admission's value
    kTraining,  // the trainer's own command for a few steps, off the run
  };
  Mode mode = Mode::kOff;
  std::optional<int> steps;        // unset: LapSteps() for the workload
  // The lap is stopped after this and the trainer starts; unset: LapTimeoutSeconds().
  std::optional<int> timeout_seconds;
  int answer_wait_seconds = 120;   // after the lap, how long a pod waits for the run's value
  // The most of the run's steps a lap may cost (LapCostOf): a lap that would cost more, or whose
  // run's length is unknown, is not run, and the reason says so.
  double max_run_share = 0.03;
};
std::string ToString(LapPolicy::Mode mode);
Result<LapPolicy::Mode> ParseLapMode(const std::string& text);  // "Off" | "Training"

struct Policy {
  Mode mode = Mode::kAuto;
  // Treat a MaxText job that sets no grain_worker_count at all as if it said -1.
  bool tune_unset = false;
  int min_workers = 1;
  int max_workers = 256;
  // Left to the trainer process (JAX host threads, Python, checkpointing). Unset: the default
  // of DefaultReservedCpu / DefaultReservedMemory for the host.
  std::optional<double> reserved_cpu_cores;
  std::optional<double> reserved_memory_bytes;
  double memory_headroom = 0.10;   // fraction of the workers' memory budget kept free
  double safety_factor = 1.25;     // over-provisioning of the computed need
  double noise_tolerance = 0.03;   // throughput differences below this are not chased
  Objective objective = Objective::kThroughput;
  LearningScope learn_from;        // spec.learnFrom
  LapPolicy lap;                   // spec.lap
  // spec.startCheck: graintune-launcher starts every tuned trainer that has a command of its own,
  // with the start check in front of MaxText (docs/start-check.md). Off: the trainer's command is
  // left as written, unless a practice lap wraps it.
  bool start_check = true;
  std::string name = "built-in defaults";  // for people: "GrainTunePolicy tpu-team"
  std::string object_name;  // the GrainTunePolicy's metadata.name; empty for the defaults
};

double DefaultReservedCpu(double host_cpu_cores);       // max(4, 5% of the host)
double DefaultReservedMemory(double host_memory_bytes);  // max(16 GiB, 25% of the host)

// Checks ranges (min <= max, factors in range); the message names the bad field.
Status Validate(const Policy& policy);

}  // namespace graintune
