// graintune's start check (launcher/python, docs/start-check.md), carried inside the static
// launcher so the trainer's image needs nothing of graintune: the two Python files `--install`
// writes beside the launcher, and the environment that makes the trainer's own Python run them.
//
// StartCheckEnv: PYTHONPATH with the check's folder first (the trainer's own PYTHONPATH, from the
// image or the pod, kept after it), and GRAINTUNE_START_CHECK with the check's settings (where to
// write its report, its time bound, the value graintune wrote). The check itself decides in the
// trainer's interpreter; every Python that is not MaxText's trainer returns from it at once.
// Pure except InstallStartCheck, which writes files and returns an error naming the one it could
// not write.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace graintune::launcher {

// The folder, under the launcher's own, that holds the check's Python files.
inline constexpr char kStartCheckFolder[] = "python";
inline constexpr char kStartCheckSettingsVariable[] = "GRAINTUNE_START_CHECK";

struct StartCheckSettings {
  std::string python_dir;   // where InstallStartCheck wrote the files
  std::string report_file;  // the check's report (graintune's exporter serves it)
  int timeout_seconds = 120;
  std::optional<int> admission_value;  // what graintune wrote into the start, for the report
  // graintune's value for a start that leaves the count to MaxText (-1) where admission could
  // not rewrite it (a script, a sourced file): the check starts it with this, within what
  // MaxText accepts, unless the run's checkpoint saved a count.
  std::optional<int> fill_value;
};

// Writes sitecustomize.py and graintune_start_check.py into `python_dir` (created).
Status InstallStartCheck(const std::string& python_dir);

// The variables to set for the trainer's start; `pythonpath_now` is PYTHONPATH as the launcher
// sees it (nullopt: unset).
std::vector<std::pair<std::string, std::string>> StartCheckEnv(const StartCheckSettings& settings,
                                                               const std::optional<std::string>& pythonpath_now);

}  // namespace graintune::launcher
