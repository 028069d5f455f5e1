// graintune-launcher's command line: the one list of its flags. The webhook writes them
// (webhook/lap_injection.cc), the launcher declares and parses them (launcher/launcher_main.cc, its
// --help from the same list), and the operator reads one back from a pod's command
// (operator/pod_facts.cc: how long the launcher waits for the answer). A launcher command is
//   <dir>/graintune-launcher --NAME=VALUE ... -- TRAINER-COMMAND...
// in the "--name=value" form the webhook writes, durations in whole seconds ("120s"); the words
// after the first "--" are the trainer's own and are never read as flags.
// Pure; linked by the static launcher as well as the servers (no graintune library beyond
// base/status.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graintune::contract {

enum class LauncherFlag {
  kInstall,
  kValueAt,
  kValueEnv,
  kAdmissionValue,
  kLapAfterArg,
  kLapInScript,
  kLapSteps,
  kLapScheduleSteps,
  kLapTimeout,
  kAnswerWait,
  kAnswerFile,
  kLapDirectory,
  kLapMetricsFile,
  kResultFile,
  kCompileCacheDir,
  kTrainerMetricsFile,
  kStartCheckReport,
  kStartCheckTimeout,
  kStartCheckFill,
};

// One flag as the launcher declares it (its --help shows value_name, default_text and help).
struct LauncherFlagSpec {
  LauncherFlag flag;
  std::string_view name;  // without the dashes: "answer-wait"
  std::string_view value_name;
  std::string_view default_text;  // what applies when the flag is absent; empty: nothing
  std::string_view help;
};

// Every flag, in --help's order.
const std::vector<LauncherFlagSpec>& LauncherFlagSpecs();

// "answer-wait".
std::string NameOf(LauncherFlag flag);

// One word of a launcher command: "--answer-file=/graintune-lap/value".
std::string LauncherWord(LauncherFlag flag, std::string_view value);
// A duration's word, in whole seconds: "--answer-wait=120s".
std::string LauncherSecondsWord(LauncherFlag flag, long seconds);

// The words before the first "--" hold flag words; the trainer's own follow it.
inline constexpr std::string_view kTrainerCommandFollows = "--";

// Whether `word` is `flag`'s ("--name=..."): for rewriting one in place.
bool IsLauncherWord(std::string_view word, LauncherFlag flag);

// The value of `flag` among the launcher's words of `command` (a container's command: its words
// up to the first "--"); nullopt when the flag is not there.
std::optional<std::string> LauncherFlagValue(const std::vector<std::string>& command, LauncherFlag flag);

// A duration flag's whole seconds ("120s" -> 120); nullopt when absent or in another form.
std::optional<int> LauncherSecondsValue(const std::vector<std::string>& command, LauncherFlag flag);

}  // namespace graintune::contract
