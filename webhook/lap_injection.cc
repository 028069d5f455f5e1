#include "webhook/lap_injection.h"

#include <algorithm>
#include <charconv>

#include "contract/launcher_flags.h"
#include "telemetry/start_check_report.h"
#include "webhook/exporter_injection.h"
#include "workload/pod_templates.h"

namespace graintune::webhook {
namespace {

using contract::LauncherFlag;
using json = nlohmann::json;
using workload::Override;
using workload::OverrideLocation;

constexpr char kValueKey[] = "grain_worker_count";

// The container's argv as the kubelet runs it (command then args), every element a string.
std::optional<std::vector<std::string>> ArgvOf(const json& container, size_t& command_size) {
  const auto command = container.find("command");
  if (command == container.end() || !command->is_array() || command->empty()) return std::nullopt;
  std::vector<std::string> argv;
  for (const char* list : {"command", "args"}) {
    const auto it = container.find(list);
    if (it == container.end()) continue;
    if (!it->is_array()) return std::nullopt;
    for (const json& element : *it) {
      if (!element.is_string()) return std::nullopt;
      argv.push_back(element.get<std::string>());
    }
    if (std::string_view(list) == "command") command_size = argv.size();
  }
  return argv;
}

// "/command/3" -> 3; "/args/1" -> command_size + 1; nullopt for anything else.
std::optional<size_t> ArgvIndex(const std::string& pointer, size_t command_size) {
  size_t offset = 0;
  std::string_view rest;
  if (pointer.starts_with("/command/")) rest = std::string_view(pointer).substr(9);
  else if (pointer.starts_with("/args/")) rest = std::string_view(pointer).substr(6), offset = command_size;
  else return std::nullopt;
  size_t index = 0;
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return offset + index;
}

bool IsShell(const std::string& program) {
  const std::string name = program.substr(program.rfind('/') + 1);
  return name == "bash" || name == "sh" || name == "dash" || name == "zsh" || name == "ash";
}

// Just past the raw word whose value ends at `value_end` (its closing quotes), if a word boundary
// follows there: whitespace, a shell operator or the end of the script.
std::optional<size_t> WordEnd(const std::string& script, size_t value_end) {
  size_t at = value_end;
  while (at < script.size() && (script[at] == '"' || script[at] == '\'')) ++at;
  if (at == script.size() || std::string_view(" \t\n;&|)<>").find(script[at]) != std::string_view::npos)
    return at;
  return std::nullopt;
}

// graintune's value: the last grain_worker_count override holding admission's value.
const Override* ValueOverride(const workload::ContainerOverrides& overrides, int value) {
  const Override* found = nullptr;
  for (const Override& o : overrides.overrides)
    if (o.key == kValueKey && o.value == std::to_string(value) && o.replaceable &&
        (!found || o.order > found->order))
      found = &o;
  return found;
}

// Where the lap's overrides go in the start `view`: "--lap-in-script=I:O" after its last script
// word, or "--lap-after-arg=I" after the last argv element of an exec-form command.
Result<std::string> InsertionFlag(const std::vector<std::string>& argv, size_t command_size,
                                  const workload::ContainerOverrides& view) {
  const Override* last_script_word = nullptr;
  for (const Override& o : view.overrides)
    if (o.location == OverrideLocation::kScript && (!last_script_word || o.order > last_script_word->order))
      last_script_word = &o;
  if (!last_script_word) {
    if (IsShell(argv.front()))
      return Status::Error("the trainer starts from a shell script with no MaxText override graintune can read");
    return contract::LauncherWord(LauncherFlag::kLapAfterArg, std::to_string(argv.size() - 1));
  }
  const std::optional<size_t> arg = ArgvIndex(last_script_word->pointer, command_size);
  if (!arg || *arg >= argv.size()) return Status::Error("the trainer's script is not in its command or args");
  const std::optional<size_t> end = WordEnd(argv[*arg], last_script_word->value_end);
  if (!end)
    return Status::Error("the trainer's last MaxText word (" + last_script_word->key +
                         ") does not end at a word boundary graintune can see");
  return contract::LauncherWord(LauncherFlag::kLapInScript, std::to_string(*arg) + ":" + std::to_string(*end));
}

// The trainer's learning-rate schedule length as its words set it (MaxText: a
// learning_rate_schedule_steps of -1 means `steps`), so the lap compiles the trainer's own train
// step; nullopt when its words do not say (a config file's value is not read here).
std::optional<int> ScheduleSteps(const workload::ContainerOverrides& view) {
  for (const char* key : {"learning_rate_schedule_steps", "steps"}) {
    const workload::KeyState state = view.Lookup(key);
    if (state.kind == workload::KeyState::Kind::kUnset) continue;
    if (state.kind == workload::KeyState::Kind::kUnknown) return std::nullopt;
    int steps = 0;
    const auto [end, error] = std::from_chars(state.value.data(), state.value.data() + state.value.size(), steps);
    if (error != std::errc() || end != state.value.data() + state.value.size()) return std::nullopt;
    if (steps > 0) return steps;
    if (steps != -1) return std::nullopt;
  }
  return std::nullopt;
}

// The flags of the launcher's watch on the trainer's compile (launcher/compile_watch.h): the
// trainer's metrics file, and its jax_cache_dir when the job sets it (MaxText's default,
// ~/jax_cache, is the launcher's). None when the trainer would not use the cache (dump_hlo on,
// which MaxText turns it off for) or graintune cannot tell whether it would: a cache the trainer
// never writes would read as a hit.
std::vector<std::string> CompileWatchFlags(const workload::ContainerOverrides& view, const std::string& metrics_dir) {
  const workload::KeyState dump_hlo = view.Lookup("dump_hlo");
  if (dump_hlo.kind == workload::KeyState::Kind::kUnknown ||
      (dump_hlo.kind == workload::KeyState::Kind::kSet && dump_hlo.value != "false" && dump_hlo.value != "False"))
    return {};
  std::vector<std::string> flags = {
      contract::LauncherWord(LauncherFlag::kTrainerMetricsFile, metrics_dir + "/" + kTrainerMetricsFileName)};
  const workload::KeyState cache = view.Lookup("jax_cache_dir");
  if (cache.kind == workload::KeyState::Kind::kUnknown) return {};
  if (cache.kind == workload::KeyState::Kind::kSet)
    flags.push_back(contract::LauncherWord(LauncherFlag::kCompileCacheDir, cache.value));
  return flags;
}

}  // namespace

Result<std::vector<std::string>> StartCheckFlags(const json& container, int admission_value,
                                                 const LapInjection& options, bool fills) {
  size_t command_size = 0;
  if (!ArgvOf(container, command_size))
    return Status::Error("the container has no command of its own (its image's entrypoint runs), "
                         "so graintune cannot start it");
  std::vector<std::string> flags = {
      contract::LauncherWord(LauncherFlag::kAdmissionValue, std::to_string(admission_value)),
      contract::LauncherWord(LauncherFlag::kStartCheckReport,
                             options.metrics_dir + "/" + telemetry::kStartCheckReportFileName)};
  if (fills) flags.push_back(contract::LauncherWord(LauncherFlag::kStartCheckFill, std::to_string(admission_value)));
  return flags;
}

bool SetStartCheckValue(json& container, int value) {
  json& command = container["command"];
  if (!command.is_array()) return false;
  bool set = false;
  for (json& word : command) {
    if (!word.is_string()) continue;
    const std::string& text = word.get_ref<const std::string&>();
    if (text == contract::kTrainerCommandFollows) break;  // the trainer's own words follow
    for (const LauncherFlag flag : {LauncherFlag::kAdmissionValue, LauncherFlag::kStartCheckFill})
      if (contract::IsLauncherWord(text, flag)) {
        word = contract::LauncherWord(flag, std::to_string(value));
        set = true;
        break;
      }
  }
  return set;
}

Result<std::vector<std::string>> LauncherFlags(const json& container,
                                               const workload::ContainerOverrides& overrides,
                                               const LapSettings& settings,
                                               const LapInjection& options) {
  size_t command_size = 0;
  const std::optional<std::vector<std::string>> argv = ArgvOf(container, command_size);
  if (!argv)
    return Status::Error("the container has no command of its own (its image's entrypoint runs), "
                         "so graintune cannot start a lap before it");
  const Override* value = ValueOverride(overrides, settings.admission_value);
  if (!value)
    return Status::Error("graintune's value is not in the container's command, script or M_ env");
  size_t start = 0;
  if (value->location == OverrideLocation::kScript) start = value->start;
  else if (overrides.starts != 1)
    return Status::Error("the container starts MaxText more than once and its value is not in the trainer's words");
  if (start == workload::kEveryStart) start = 0;
  const workload::ContainerOverrides view = overrides.OfStart(start);
  if (!view.unknown.empty())
    return Status::Error("a word graintune cannot read may set what the lap overrides (" +
                         view.unknown.front().why + ")");
  Result<std::string> insertion = InsertionFlag(*argv, command_size, view);
  if (!insertion.ok()) return insertion.status();

  std::vector<std::string> flags;
  if (value->location == OverrideLocation::kEnv) {
    flags.push_back(contract::LauncherWord(LauncherFlag::kValueEnv, workload::EnvNameForKey(kValueKey)));
  } else {
    const std::optional<size_t> arg = ArgvIndex(value->pointer, command_size);
    if (!arg) return Status::Error("graintune's value is not in the container's command or args");
    flags.push_back(contract::LauncherWord(LauncherFlag::kValueAt, std::to_string(*arg) + ":" +
                                                                    std::to_string(value->value_begin) + ":" +
                                                                    std::to_string(value->value_end)));
  }
  flags.push_back(insertion.value());
  const std::string& metrics = options.metrics_dir;
  // The start check's flags (StartCheckFlags): a lapped trainer starts with the check too.
  Result<std::vector<std::string>> check = StartCheckFlags(container, settings.admission_value, options);
  if (!check.ok()) return check.status();
  for (std::string& flag : check.value()) flags.push_back(std::move(flag));
  for (std::string flag : {contract::LauncherWord(LauncherFlag::kLapSteps, std::to_string(settings.steps)),
                           contract::LauncherSecondsWord(LauncherFlag::kLapTimeout, settings.timeout_seconds),
                           contract::LauncherSecondsWord(LauncherFlag::kAnswerWait, settings.answer_wait_seconds),
                           contract::LauncherWord(LauncherFlag::kAnswerFile, options.answer_dir + "/value"),
                           contract::LauncherWord(LauncherFlag::kLapDirectory, options.launcher_dir + "/lap"),
                           contract::LauncherWord(LauncherFlag::kLapMetricsFile, metrics + "/lap.jsonl"),
                           contract::LauncherWord(LauncherFlag::kResultFile, metrics + "/lap-result.json")})
    flags.push_back(std::move(flag));
  if (std::optional<int> schedule = ScheduleSteps(view))
    flags.push_back(contract::LauncherWord(LauncherFlag::kLapScheduleSteps, std::to_string(*schedule)));
  for (std::string& flag : CompileWatchFlags(view, metrics)) flags.push_back(std::move(flag));
  return flags;
}

std::optional<LauncherRole> LauncherRoleOf(const json& spec) {
  const auto init = spec.find("initContainers");
  if (init == spec.end() || !init->is_array() ||
      std::none_of(init->begin(), init->end(), [](const json& c) {
        return workload::StringField(c, "name") == kLauncherInstallerName;
      }))
    return std::nullopt;
  const auto volumes = spec.find("volumes");
  const bool answered = volumes != spec.end() && volumes->is_array() &&
                        std::any_of(volumes->begin(), volumes->end(), [](const json& v) {
                          return workload::StringField(v, "name") == kLapValueVolumeName;
                        });
  return answered ? LauncherRole::kLap : LauncherRole::kStartCheck;
}

void InjectLauncher(json& object, const std::string& spec_pointer, const std::string& trainer_pointer,
                    const std::vector<std::string>& flags, LauncherRole role, const LapInjection& options) {
  json& spec = object[json::json_pointer(spec_pointer)];
  if (!spec.is_object() || LauncherRoleOf(spec)) return;  // done before
  json& container = object[json::json_pointer(trainer_pointer)];
  size_t command_size = 0;
  const std::optional<std::vector<std::string>> argv = ArgvOf(container, command_size);
  if (!argv) return;

  json& volumes = spec["volumes"];
  if (!volumes.is_array()) volumes = json::array();
  volumes.push_back({{"name", kLauncherVolumeName}, {"emptyDir", {{"sizeLimit", "1Gi"}}}});
  // The kubelet refreshes a downward-API file when the annotation changes (within its sync
  // period), so the operator's answer reaches a running pod without any network path to it.
  if (role == LauncherRole::kLap)
    volumes.push_back(
        {{"name", kLapValueVolumeName},
         {"downwardAPI",
          {{"items", {{{"path", "value"},
                       {"fieldRef", {{"fieldPath", std::string("metadata.annotations['") +
                                                       kLapValueAnnotation + "']"}}}}}}}}});

  json wrapped = json::array({options.launcher_dir + "/graintune-launcher"});
  for (const std::string& flag : flags) wrapped.push_back(flag);
  wrapped.push_back(std::string(contract::kTrainerCommandFollows));
  for (const std::string& word : *argv) wrapped.push_back(word);
  container["command"] = std::move(wrapped);
  container.erase("args");
  json& mounts = container["volumeMounts"];
  if (!mounts.is_array()) mounts = json::array();
  mounts.push_back({{"name", kLauncherVolumeName}, {"mountPath", options.launcher_dir}});
  if (role == LauncherRole::kLap)
    mounts.push_back({{"name", kLapValueVolumeName}, {"mountPath", options.answer_dir}, {"readOnly", true}});

  json installer = {
      {"name", kLauncherInstallerName},
      {"image", options.image},
      {"command",
       {"/usr/local/bin/graintune-launcher", "--" + contract::NameOf(LauncherFlag::kInstall), options.launcher_dir}},
      {"volumeMounts", {{{"name", kLauncherVolumeName}, {"mountPath", options.launcher_dir}}}},
      {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      // Pod Security "restricted" as the exporter is: a pod whose own containers meet it still
      // does with the installer (graintune's image runs as its non-root user, 65532).
      {"securityContext", {{"allowPrivilegeEscalation", false},
                           {"readOnlyRootFilesystem", true},
                           {"runAsNonRoot", true},
                           {"runAsUser", 65532},
                           {"capabilities", {{"drop", {"ALL"}}}},
                           {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
  json& init = spec["initContainers"];
  if (!init.is_array()) init = json::array();
  // First: it runs to completion before the exporter sidecar and the trainer start.
  init.insert(init.begin(), std::move(installer));
}

std::vector<std::string> LapTouches(const std::string& spec_pointer, const std::string& trainer_pointer) {
  return {spec_pointer + "/volumes", spec_pointer + "/initContainers", trainer_pointer};
}

}  // namespace graintune::webhook
