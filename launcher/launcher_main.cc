// graintune-launcher: runs a practice lap of the trainer's own command, then starts the trainer
// with the run's value (launcher/launch_plan.h says what it edits, docs/practice-lap.md how the
// pieces meet).
//
//   graintune-launcher --install DIR
//       copies this (static) binary to DIR/graintune-launcher: the init container's job, so the
//       trainer's own image needs nothing of graintune.
//   graintune-launcher [flags] -- COMMAND...
//       runs COMMAND with the lap's overrides for --lap-steps steps (at most --lap-timeout),
//       records how it ended in --result-file (read by graintune's exporter beside the lap's
//       metrics), waits at most --answer-wait for the operator's answer in --answer-file (a
//       downward-API file of the pod's graintune.dev/lap-value annotation), then execs COMMAND
//       with that value, or with admission's (already in COMMAND) when the lap failed, the
//       answer is "none" or never came. With --trainer-metrics-file, after a lap it leaves a
//       watcher beside the trainer that adds to --result-file whether the trainer found its
//       train step in the JAX cache the lap filled (launcher/compile_watch.h).
//   graintune-launcher --watch-trainer-compile=PID ...
//       that watcher (started by the launcher itself, never by hand).
//   graintune-launcher --start-check-report PATH [flags] -- COMMAND...
//       with or without a lap: COMMAND starts with graintune's start check in front of MaxText
//       (launcher/start_check_files.h: the check's folder first on PYTHONPATH, its settings in
//       GRAINTUNE_START_CHECK), which --install put beside the launcher. Without --lap-steps
//       there is no lap: COMMAND starts at once.
//
// It never breaks a run: a flag or plan it cannot use, a lap that fails in any way, or an
// answer it cannot read all end in exec of COMMAND as the webhook wrote it, with a log line
// saying why. Exit status: COMMAND's (it is exec'd); 2 only without a COMMAND to run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/atomic_file.h"
#include "base/log.h"
#include "contract/lap_answer_text.h"
#include "contract/launcher_flags.h"
#include "launcher/child_process.h"
#include "launcher/compile_watch.h"
#include "launcher/lap_result_file.h"
#include "launcher/lap_process.h"
#include "launcher/launch_plan.h"
#include "launcher/start_check_files.h"
#include "server/flags.h"
#include "contract/lap_result.h"

namespace {

using namespace graintune;
using namespace graintune::launcher;

using contract::LauncherFlag;
using contract::NameOf;  // a flag's name, as server::Flags is asked for it

const server::ServerCommand& LauncherCommand() {
  static const server::ServerCommand kCommand = [] {
    server::ServerCommand command{
        .program = "graintune-launcher",
        .summary = "runs a practice lap of the trainer's command, then the trainer with the run's value.",
        .flags = {}};
    for (const contract::LauncherFlagSpec& spec : contract::LauncherFlagSpecs())
      command.flags.push_back({.name = std::string(spec.name),
                               .value_name = std::string(spec.value_name),
                               .default_text = std::string(spec.default_text),
                               .help = std::string(spec.help)});
    return command;
  }();
  return kCommand;
}

// The start check's variables for every start of the trainer (none when it is off).
std::vector<std::pair<std::string, std::string>> g_start_check_env;

[[noreturn]] void Exec(const Command& command, const std::string& why) {
  LogLine(LogLevel::kInfo) << "starting the trainer: " << why
                           << (g_start_check_env.empty() ? "" : ", with graintune's start check");
  for (const auto& [name, value] : command.set_env) setenv(name.c_str(), value.c_str(), 1);
  for (const auto& [name, value] : g_start_check_env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args = ExecArgv(command.argv);
  execvp(args[0], args.data());
  LogLine(LogLevel::kError) << "cannot start " << command.argv[0] << ": " << std::strerror(errno);
  _exit(127);
}

int Install(const std::string& directory) {
  std::error_code error;
  const std::filesystem::path to = std::filesystem::path(directory) / "graintune-launcher";
  std::filesystem::copy_file("/proc/self/exe", to,
                             std::filesystem::copy_options::overwrite_existing, error);
  if (!error) std::filesystem::permissions(to, std::filesystem::perms(0755), error);
  if (error) {
    LogLine(LogLevel::kError) << "cannot install into " << directory << ": " << error.message();
    return 1;
  }
  // Without its files the check is absent, never in the way: the trainer starts as written.
  if (Status s = InstallStartCheck((std::filesystem::path(directory) / kStartCheckFolder).string()); !s.ok())
    LogLine(LogLevel::kWarning) << "no start check: " << s.message();
  return 0;
}

// The start check's settings from the flags, or nullopt when it is off (or cannot be set up:
// then the trainer starts as written, which the log says).
std::optional<StartCheckSettings> StartCheckFromFlags(const server::Flags& flags) {
  if (!flags.Has(NameOf(LauncherFlag::kStartCheckReport))) return std::nullopt;
  Result<std::optional<std::chrono::seconds>> timeout = flags.Duration(NameOf(LauncherFlag::kStartCheckTimeout));
  Result<std::optional<int>> admission = flags.IntegerIn(NameOf(LauncherFlag::kAdmissionValue), 0, 100000);
  Result<std::optional<int>> fill = flags.IntegerIn(NameOf(LauncherFlag::kStartCheckFill), 1, 100000);
  if (!timeout.ok() || !admission.ok() || !fill.ok()) {
    LogLine(LogLevel::kWarning) << "no start check: "
                                << (!timeout.ok() ? timeout.error() : !admission.ok() ? admission.error() : fill.error());
    return std::nullopt;
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    LogLine(LogLevel::kWarning) << "no start check: cannot find the launcher's folder: " << error.message();
    return std::nullopt;
  }
  return StartCheckSettings{.python_dir = (self.parent_path() / kStartCheckFolder).string(),
                            .report_file = *flags.Get(NameOf(LauncherFlag::kStartCheckReport)),
                            .timeout_seconds = static_cast<int>(timeout->value_or(std::chrono::seconds(120)).count()),
                            .admission_value = *admission,
                            .fill_value = *fill};
}

// Everything a lap needs, read from the flags; an error names what is missing or malformed.
struct LapPlan {
  ValueSite site;
  int admission_value = 0;
  LapInsertion insertion;
  LapOverrides overrides;
  std::chrono::seconds timeout{900}, answer_wait{120};
  std::string answer_file, result_file;
  std::string compile_cache_dir, trainer_metrics_file;  // the watch after the lap; empty file: none
};

Result<LapPlan> PlanFromFlags(const server::Flags& flags) {
  LapPlan plan;
  for (const LauncherFlag needed : {LauncherFlag::kAdmissionValue, LauncherFlag::kLapSteps, LauncherFlag::kAnswerFile,
                                    LauncherFlag::kLapDirectory, LauncherFlag::kLapMetricsFile, LauncherFlag::kResultFile})
    if (!flags.Has(NameOf(needed))) return Status::Error("--" + NameOf(needed) + " is missing");
  if (flags.Has(NameOf(LauncherFlag::kValueEnv)) == flags.Has(NameOf(LauncherFlag::kValueAt)))
    return Status::Error("exactly one of --value-at and --value-env is needed");
  if (flags.Has(NameOf(LauncherFlag::kLapAfterArg)) == flags.Has(NameOf(LauncherFlag::kLapInScript)))
    return Status::Error("exactly one of --lap-after-arg and --lap-in-script is needed");
  if (flags.Has(NameOf(LauncherFlag::kValueEnv))) {
    plan.site.env_name = *flags.Get(NameOf(LauncherFlag::kValueEnv));
  } else {
    Result<ValueSite> site = ParseValueAt(*flags.Get(NameOf(LauncherFlag::kValueAt)));
    if (!site.ok()) return site.status();
    plan.site = site.value();
  }
  const bool in_script = flags.Has(NameOf(LauncherFlag::kLapInScript));
  Result<LapInsertion> insertion =
      ParseLapInsertion(*flags.Get(NameOf(in_script ? LauncherFlag::kLapInScript : LauncherFlag::kLapAfterArg)), in_script);
  if (!insertion.ok()) return insertion.status();
  plan.insertion = insertion.value();
  Result<std::optional<int>> admission = flags.IntegerIn(NameOf(LauncherFlag::kAdmissionValue), 1, 100000);
  Result<std::optional<int>> steps = flags.IntegerIn(NameOf(LauncherFlag::kLapSteps), 1, 100000);
  Result<std::optional<std::chrono::seconds>> timeout = flags.Duration(NameOf(LauncherFlag::kLapTimeout));
  Result<std::optional<std::chrono::seconds>> wait = flags.Duration(NameOf(LauncherFlag::kAnswerWait));
  if (!admission.ok()) return admission.status();
  if (!steps.ok()) return steps.status();
  if (!timeout.ok()) return timeout.status();
  if (!wait.ok()) return wait.status();
  Result<std::optional<int>> schedule = flags.IntegerIn(NameOf(LauncherFlag::kLapScheduleSteps), 1, 1000000000);
  if (!schedule.ok()) return schedule.status();
  plan.admission_value = **admission;
  plan.timeout = **timeout;
  plan.answer_wait = **wait;
  plan.overrides = {.steps = **steps,
                    .output_directory = *flags.Get(NameOf(LauncherFlag::kLapDirectory)),
                    .run_name = "graintune-practice-lap",
                    .metrics_file = *flags.Get(NameOf(LauncherFlag::kLapMetricsFile)),
                    .schedule_steps = *schedule};
  plan.answer_file = *flags.Get(NameOf(LauncherFlag::kAnswerFile));
  plan.result_file = *flags.Get(NameOf(LauncherFlag::kResultFile));
  plan.compile_cache_dir = flags.Get(NameOf(LauncherFlag::kCompileCacheDir)).value_or("");
  plan.trainer_metrics_file = flags.Get(NameOf(LauncherFlag::kTrainerMetricsFile)).value_or("");
  return plan;
}

// What the launcher can tell of the trainer's compile as the lap ends: a verdict already, a watch
// to start (launcher/compile_watch.h), or neither (no trainer metrics file: nothing to watch).
struct CompilePlan {
  std::optional<contract::TrainerCompileVerdict> verdict;
  std::optional<CompileWatch> watch;
};

// After a lap, before the trainer: the cache's train steps now, to judge the trainer's compile
// against. A cache that is not a local folder, or one the lap left no train step in, is judged
// at once.
CompilePlan PlanCompileWatch(const LapPlan& plan) {
  if (plan.trainer_metrics_file.empty()) return {};
  const std::optional<std::string> cache = LocalCacheDir(plan.compile_cache_dir, std::getenv("HOME"));
  if (!cache)
    return {.verdict = contract::TrainerCompileVerdict{
                contract::TrainerCompile::kUnknown, "the JAX cache " + plan.compile_cache_dir + " is not a local folder"}};
  CompileWatch watch{.trainer = getpid(), .cache_dir = *cache, .before = TrainStepsIn(*cache),
                     .metrics_file = plan.trainer_metrics_file};
  if (watch.before.empty()) return {.verdict = contract::JudgeTrainerCompile(watch.before, std::nullopt)};
  std::error_code error;
  const auto size = std::filesystem::file_size(watch.metrics_file, error);
  watch.metrics_offset = error ? 0 : static_cast<long long>(size);
  return {.watch = watch};
}

// How the lap ended, for graintune's exporter: contract::LapResult, the one type and JSON the
// exporter reads back (contract/lap_result.h), with what is known of the trainer's compile: its
// verdict, or "watching" while a watcher is to add it.
void WriteResult(const LapPlan& plan, const LapOutcome& outcome, const CompilePlan& compile) {
  const contract::LapResult result{.completed = outcome.completed(),
                                    .outcome = outcome.Describe(),
                                    .wall_seconds = outcome.wall_seconds,
                                    .steps = plan.overrides.steps,
                                    .workers = plan.admission_value,
                                    .trainer_compile = compile.verdict,
                                    .trainer_compile_watching = !compile.verdict && compile.watch.has_value()};
  if (compile.verdict) LogTrainerCompile(*compile.verdict);
  WriteLapResult(plan.result_file, result);
}

// The watcher's process: its verdict, added to the lap's result file.
int RunWatcher(const std::vector<std::string>& flag_args) {
  Result<std::pair<CompileWatch, std::string>> watch = WatchFromArgs(flag_args);
  if (!watch.ok()) {
    LogLine(LogLevel::kError) << "compile-cache watcher: " << watch.error();
    return 2;
  }
  RecordTrainerCompile(watch->second, WatchTrainerCompile(watch->first));
  return 0;
}

// The operator's answer, read once a second until it comes or `wait` passes.
Result<contract::LapAnswerText> AwaitAnswer(const std::string& path, std::chrono::seconds wait) {
  for (auto until = std::chrono::steady_clock::now() + wait;;) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    Result<contract::LapAnswerText> answer = contract::ParseLapAnswerText(in ? text.str() : "");
    if (!answer.ok() || answer.value().decided) return answer;
    if (std::chrono::steady_clock::now() >= until)
      return Status::Error("no answer from graintune's operator within " +
                           std::to_string(wait.count()) + " s");
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// The value the operator answered for the whole slice, waited for at most answer_wait: every host
// waits for the same answer, so none starts its trainer alone with another value. Without a
// value, admission's, as on every other host.
std::pair<int, std::string> SliceValue(const LapPlan& plan) {
  Result<contract::LapAnswerText> answer = AwaitAnswer(plan.answer_file, plan.answer_wait);
  if (!answer.ok()) return {plan.admission_value, "admission's value: " + answer.error()};
  if (!answer.value().workers) return {plan.admission_value, "admission's value: " + answer.value().why};
  return {*answer.value().workers, "the run's value from its practice lap"};
}

// The lap, then the value it leads to: the operator's, or admission's with the reason.
std::pair<int, std::string> LapThenValue(const LapPlan& plan, const std::vector<std::string>& argv) {
  // Decided before any lap (the webhook answers "none" for an attempt that resumes its run, and
  // a run whose value is recorded has it): no lap.
  if (Result<contract::LapAnswerText> early = AwaitAnswer(plan.answer_file, std::chrono::seconds(0));
      early.ok() && early.value().decided) {
    if (!early.value().workers) return {plan.admission_value, "no lap: " + early.value().why};
    return {*early.value().workers, "no lap: the run's value was decided before it"};
  }
  const std::vector<std::string> words = LapWords(plan.overrides);
  Result<std::vector<std::string>> lap = LapArgv(argv, plan.insertion, words);
  if (!lap.ok()) return {plan.admission_value, "no lap (" + lap.error() + ")"};
  // One lap per pod. The marker sits beside the lap's folder, in the pod's emptyDir, which a
  // container restart keeps: a lap killed together with its launcher (a cgroup v2 OOM kill takes
  // the container's whole memory group) restarts the container, and that start runs no second
  // lap. Its result says why, so the operator answers no lap of this pod.
  const std::string marker = LapMarkerPath(plan.overrides.output_directory);
  if (std::filesystem::exists(marker)) {
    LapOutcome restarted;
    restarted.why = "a lap already started in this pod, and the container restarted before it ended "
                    "(an OOM kill of the container ends a lap this way)";
    WriteResult(plan, restarted, {});
    LogLine(LogLevel::kInfo) << "no second lap: " << restarted.why << "; waiting for the slice's answer";
    return SliceValue(plan);
  }
  // A folder or marker it cannot make (a full or read-only volume) means no lap, never a failed
  // start: without the marker a lap that takes the container down would run again at each restart.
  std::error_code folder_error;
  std::filesystem::create_directories(plan.overrides.output_directory, folder_error);
  if (folder_error)
    return {plan.admission_value, "no lap (cannot create " + plan.overrides.output_directory + ": " +
                                      folder_error.message() + ")"};
  if (Status marked = WriteFileAtomically(marker, "the practice lap started\n"); !marked.ok())
    return {plan.admission_value, "no lap (" + marked.message() + ")"};
  LogLine(LogLevel::kInfo) << "practice lap: " << plan.overrides.steps << " steps with "
                           << plan.admission_value << " workers, at most " << plan.timeout.count() << " s";
  EnvChanges without_lap_keys;  // e.g. M_METRICS_FILE, which graintune's exporter sets
  for (std::string& name : EnvNamesOf(words)) without_lap_keys.emplace_back(std::move(name), std::nullopt);
  // The operator answers "none" at once when any host's lap failed: the peers' laps, still in
  // their collectives with it, end then too, and every host starts with admission's value.
  const CallOff answered_none = [&]() -> std::optional<std::string> {
    Result<contract::LapAnswerText> answer = AwaitAnswer(plan.answer_file, std::chrono::seconds(0));
    if (answer.ok() && answer.value().decided && !answer.value().workers)
      return "graintune's operator answered none (" + answer.value().why + ")";
    return std::nullopt;
  };
  const LapOutcome outcome =
      RunLap(lap.value(), without_lap_keys, plan.timeout, std::chrono::seconds(10), answered_none);
  if (outcome.kind == LapOutcome::Kind::kStopped) {  // the pod is being stopped: no trainer
    WriteResult(plan, outcome, {});
    LogLine(LogLevel::kInfo) << "practice lap " << outcome.Describe() << "; the trainer does not start";
    std::exit(128 + SIGTERM);
  }
  const CompilePlan compile = PlanCompileWatch(plan);
  WriteResult(plan, outcome, compile);
  if (compile.watch && !StartWatcher("/proc/self/exe", WatcherArgs(*compile.watch, plan.result_file)))
    RecordTrainerCompile(plan.result_file, {contract::TrainerCompile::kUnknown, "the compile-cache watcher did not start"});
  std::error_code ignored;
  std::filesystem::remove_all(plan.overrides.output_directory, ignored);
  LogLine(LogLevel::kInfo) << "practice lap " << outcome.Describe() << " in "
                           << static_cast<long>(outcome.wall_seconds) << " s";
  // A lap that failed here still waits for the slice's answer (the operator answers "none" at
  // once when it reads the failure).
  if (!outcome.completed())
    LogLine(LogLevel::kInfo) << "the lap " << outcome.Describe() << "; waiting for the slice's answer";
  return SliceValue(plan);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = server::Arguments(argc, argv);
  const auto separator = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> command(separator == args.end() ? args.end() : separator + 1, args.end());
  const std::vector<std::string> flag_args(args.begin(), separator);
  SetLogProgram("graintune-launcher");
  if (!flag_args.empty() && flag_args.front().starts_with(kWatchFlag)) return RunWatcher(flag_args);
  Result<server::Flags> flags = server::Flags::ParseDeclared(flag_args, LauncherCommand().flags);
  if (flags.ok() && flags.value().Has(NameOf(LauncherFlag::kInstall)))
    return Install(*flags.value().Get(NameOf(LauncherFlag::kInstall)));
  if (command.empty()) {
    std::cerr << server::UsageText(LauncherCommand());
    return 2;
  }
  const Command as_written{.argv = command, .set_env = {}};
  if (!flags.ok()) Exec(as_written, "admission's value (flags: " + flags.error() + ")");
  if (std::optional<StartCheckSettings> check = StartCheckFromFlags(flags.value())) {
    const char* pythonpath = std::getenv("PYTHONPATH");
    g_start_check_env = StartCheckEnv(*check, pythonpath ? std::optional<std::string>(pythonpath) : std::nullopt);
  }
  if (!flags.value().Has(NameOf(LauncherFlag::kLapSteps))) Exec(as_written, "admission's value, no lap");
  Result<LapPlan> plan = PlanFromFlags(flags.value());
  if (!plan.ok()) Exec(as_written, "admission's value (" + plan.error() + ")");
  // The place must hold admission's value before any lap: else the command is not the one the
  // webhook described (a later admission rewrote it), and neither a lap nor an answer applies.
  const ValueSite& site = plan.value().site;
  const char* env_now = site.env_name.empty() ? nullptr : std::getenv(site.env_name.c_str());
  const std::optional<std::string> env_value = env_now ? std::optional<std::string>(env_now) : std::nullopt;
  const int written = plan.value().admission_value;
  if (Result<Command> same = WithValue(command, site, written, written, env_value); !same.ok())
    Exec(as_written, "admission's value, no lap (" + same.error() + ")");
  const auto [workers, why] = LapThenValue(plan.value(), command);
  Result<Command> trainer = WithValue(command, site, written, workers, env_value);
  if (!trainer.ok()) {
    const std::string kept = "admission's value (" + trainer.error() + ")";
    RecordTrainerStart(plan.value().result_file, written, kept);
    Exec(as_written, kept);
  }
  RecordTrainerStart(plan.value().result_file, workers, why);
  Exec(trainer.value(), std::to_string(workers) + " workers, " + why);
}
