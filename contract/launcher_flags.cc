#include "contract/launcher_flags.h"

#include <algorithm>
#include <charconv>

namespace graintune::contract {

const std::vector<LauncherFlagSpec>& LauncherFlagSpecs() {
  using F = LauncherFlag;
  static const std::vector<LauncherFlagSpec> kSpecs = {
      {F::kInstall, "install", "DIR", "", "copy this binary into DIR and exit"},
      {F::kValueAt, "value-at", "ARG:BEGIN:END", "", "the value's bytes in argument ARG of the command"},
      {F::kValueEnv, "value-env", "NAME", "", "the value is the M_ variable NAME"},
      {F::kAdmissionValue, "admission-value", "N", "", "the value the command holds (admission's)"},
      {F::kLapAfterArg, "lap-after-arg", "ARG", "", "the lap's overrides go after argument ARG"},
      {F::kLapInScript, "lap-in-script", "ARG:OFFSET", "", "... or at byte OFFSET of the script in argument ARG"},
      {F::kLapSteps, "lap-steps", "N", "", "steps the lap runs"},
      {F::kLapScheduleSteps, "lap-schedule-steps", "N", "",
       "the trainer's learning-rate schedule length, so the lap compiles its program"},
      {F::kLapTimeout, "lap-timeout", "DURATION", "900s", "the lap is stopped after this"},
      {F::kAnswerWait, "answer-wait", "DURATION", "120s", "after the lap, how long to wait for the operator's answer"},
      {F::kAnswerFile, "answer-file", "PATH", "", "the operator's answer (downward API)"},
      {F::kLapDirectory, "lap-directory", "DIR", "", "the lap's output (pod-local), removed after it"},
      {F::kLapMetricsFile, "lap-metrics-file", "PATH", "", "the lap's MaxText metrics file"},
      {F::kResultFile, "result-file", "PATH", "", "how the lap ended, as JSON"},
      {F::kCompileCacheDir, "compile-cache-dir", "DIR", "~/jax_cache",
       "the trainer's jax_cache_dir, where the lap leaves its compiled train step"},
      {F::kTrainerMetricsFile, "trainer-metrics-file", "PATH", "",
       "the trainer's MaxText metrics file: its first step ends the compile-cache watch"},
      {F::kStartCheckReport, "start-check-report", "PATH", "",
       "start the trainer with graintune's start check, which writes what it saw here"},
      {F::kStartCheckTimeout, "start-check-timeout", "DURATION", "120s",
       "the start check leaves the start as written after this"},
      {F::kStartCheckFill, "start-check-fill", "N", "",
       "a start that leaves the count to MaxText (-1) starts with N, within what MaxText accepts, unless "
       "its checkpoint saved a count"},
  };
  return kSpecs;
}

std::string NameOf(LauncherFlag flag) {
  for (const LauncherFlagSpec& spec : LauncherFlagSpecs())
    if (spec.flag == flag) return std::string(spec.name);
  return "";  // every enumerator is in the list (LauncherFlagsTest checks it)
}

namespace {

// "--name=": how every word of `flag` begins.
std::string WordPrefix(LauncherFlag flag) { return "--" + NameOf(flag) + "="; }

}  // namespace

std::string LauncherWord(LauncherFlag flag, std::string_view value) {
  return WordPrefix(flag) + std::string(value);
}

std::string LauncherSecondsWord(LauncherFlag flag, long seconds) {
  return LauncherWord(flag, std::to_string(seconds) + "s");
}

bool IsLauncherWord(std::string_view word, LauncherFlag flag) {
  return word.starts_with(WordPrefix(flag));
}

std::optional<std::string> LauncherFlagValue(const std::vector<std::string>& command, LauncherFlag flag) {
  const auto end = std::find(command.begin(), command.end(), kTrainerCommandFollows);
  const std::string prefix = WordPrefix(flag);
  for (auto word = command.begin(); word != end; ++word)
    if (word->starts_with(prefix)) return word->substr(prefix.size());
  return std::nullopt;
}

std::optional<int> LauncherSecondsValue(const std::vector<std::string>& command, LauncherFlag flag) {
  const std::optional<std::string> value = LauncherFlagValue(command, flag);
  if (!value || value->size() < 2 || value->back() != 's') return std::nullopt;
  int seconds = 0;
  const char* begin = value->data();
  const char* end = value->data() + value->size() - 1;
  const auto [stop, error] = std::from_chars(begin, end, seconds);
  if (error != std::errc() || stop != end || seconds < 0) return std::nullopt;
  return seconds;
}

}  // namespace graintune::contract
