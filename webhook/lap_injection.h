// The practice lap the webhook adds to a trainer (docs/practice-lap.md): graintune-launcher wraps
// the trainer's command, runs a lap of it, then starts the trainer with the run's value.
//
// LauncherFlags reads the trainer container as it will be stored (admission's value written) and
// says where that value sits and where the lap's overrides go, as graintune-launcher's flags
// (launcher/launch_plan.h); it never parses shell or MaxText at run time. A container gets no lap
// (an error naming why) when graintune cannot wrap it safely:
//   - it has no `command` of its own (the image's entrypoint would run, which graintune cannot see);
//   - graintune's value is not in its command, script or M_ env (a ConfigMap holds it);
//   - a word graintune cannot read (an unexpanded $VAR, a command substitution) may set a key
//     of the trainer's start: it could come after the lap's overrides and undo them;
//   - the trainer starts inside a script whose MaxText words graintune cannot end at a word
//     boundary, or is started by a shell without a script graintune can read.
// StartCheckFlags is the launcher without a lap: the trainer starts at once, with the start check
// in front of MaxText (docs/start-check.md). It needs only a command of the container's own.
// InjectLauncher then edits the pod template: an emptyDir and an init container that copies the
// launcher into it (from graintune's image), for a lap a downward-API volume holding the pod's
// graintune.dev/lap-value annotation (the operator's answer), and the trainer's command replaced
// by `graintune-launcher FLAGS -- COMMAND ARGS` (its `args` folded into the command).
// Pure over JSON values; never throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "workload/container_overrides.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {

using workload::kLapValueAnnotation;
inline constexpr char kLauncherVolumeName[] = "graintune-launcher";
inline constexpr char kLapValueVolumeName[] = "graintune-lap-value";
inline constexpr char kLauncherInstallerName[] = "graintune-launcher-install";

struct LapInjection {
  std::string image = "ghcr.io/graintune/graintune:0.1.0";  // holds /usr/local/bin/graintune-launcher
  std::string launcher_dir = "/graintune-launcher";  // the emptyDir, in the installer and trainer
  std::string answer_dir = "/graintune-lap";         // the downward-API volume, in the trainer
  std::string metrics_dir = "/graintune-metrics";    // the exporter's volume (lap metrics, result)
};

// One trainer's lap, as admission decided it.
struct LapSettings {
  int admission_value = 0;  // the value written into the container
  int steps = 0;
  int timeout_seconds = 900;
  int answer_wait_seconds = 120;
  std::string cost;  // what the lap is expected to cost the run, for people (LapCost::Describe)
};

// graintune-launcher's flags (before its `--`) for `container`, whose overrides (ScanContainer of
// the container as it will be stored) are `overrides`; or why it gets no lap.
Result<std::vector<std::string>> LauncherFlags(const nlohmann::json& container,
                                               const workload::ContainerOverrides& overrides,
                                               const LapSettings& settings,
                                               const LapInjection& options);

// graintune-launcher's flags for a start check without a lap (the report in the exporter's
// volume), or why `container` cannot be wrapped: it has no command of its own. `fills`: the
// container leaves the count to MaxText (-1) where graintune cannot rewrite it, and the check
// starts it with `admission_value` instead (--start-check-fill).
Result<std::vector<std::string>> StartCheckFlags(const nlohmann::json& container, int admission_value,
                                                 const LapInjection& options, bool fills = false);

// Sets the value a launcher-wrapped `container` (InjectLauncher) was given for its start check
// (--admission-value, and --start-check-fill when it has one) to `value`: a pod of a later
// attempt, made from a template wrapped for the first, starts with its own attempt's value.
// Whether the container held such a flag.
bool SetStartCheckValue(nlohmann::json& container, int value);

// What the launcher does before the trainer: a lap (its answer arrives through a downward-API
// file), or only the start check.
enum class LauncherRole { kLap, kStartCheck };

// Wraps the trainer at `trainer_pointer` with `flags` and adds the volumes and the installer to
// the pod spec at `spec_pointer`. Idempotent: a spec that has the installer is left alone.
void InjectLauncher(nlohmann::json& object, const std::string& spec_pointer,
                    const std::string& trainer_pointer, const std::vector<std::string>& flags,
                    LauncherRole role, const LapInjection& options);

// The role of the launcher `spec` carries (InjectLauncher), or nullopt without one.
std::optional<LauncherRole> LauncherRoleOf(const nlohmann::json& spec);

// Every pointer InjectLauncher may write under (scoped_patch.h).
std::vector<std::string> LapTouches(const std::string& spec_pointer,
                                    const std::string& trainer_pointer);

}  // namespace graintune::webhook
