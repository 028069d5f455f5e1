#include "webhook/planner_launcher.h"

#include <algorithm>

#include "contract/lap_answer_text.h"
#include "tuner/practice_lap.h"
#include "webhook/scoped_patch.h"
#include "workload/container_overrides.h"
#include "workload/identity.h"

namespace graintune::webhook::planner {
namespace {

// `resolved` (the container's env as read before any edit) with the literal values as `container`
// now holds them: graintune's M_ value written, or appended.
workload::ContainerEnv EnvAsStored(const workload::ContainerEnv& resolved, const json& container) {
  workload::ContainerEnv env = resolved;
  for (workload::EnvVariable& v : env.variables)
    if (!v.pointer.empty())
      if (const json::json_pointer at(v.pointer); container.contains(at) && container.at(at).is_string())
        v.value = container.at(at).get<std::string>();
  const json list = container.value("env", json::array());
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    const std::string name = workload::StringField(list[i], "name");
    if (!workload::MaxTextKeyFromEnv(name).empty() && !env.Find(name) && list[i].contains("value") &&
        list[i]["value"].is_string())
      env.variables.push_back({name, list[i]["value"].get<std::string>(),
                               "/env/" + std::to_string(i) + "/value", "env"});
  }
  return env;
}

// The launcher's answer for attempt `attempt` > 0, set on the pod (template) metadata at
// `metadata_pointer` before its pods start: no lap, the trainer starts as written.
void AnnotateNoLap(json& object, const std::string& metadata_pointer, int attempt, Plan& plan) {
  plan.lap = "no practice lap: attempt " + std::to_string(attempt) + " continues its run";
  Annotate(object, metadata_pointer,
           {{kLapValueAnnotation, contract::FormatNoLapValue("attempt " + std::to_string(attempt) + " continues its run")}},
           {});
}

// The practice lap for the run's trainer `trainer` of template `t`, as written now (admission's
// value in place): the launcher wraps it (true), or plan.lap says why it gets none. Only beside
// the exporter, which measures the lap.
bool AddLap(json& object, const TemplateSites& t, const ContainerSites& trainer,
            const LapSettings& lap, const ExporterInjection& exporter, Plan& plan) {
  if (trainer.overrides.HasKey("metrics_file")) {  // no exporter (InjectExporter), so nothing measures it
    plan.lap = "no practice lap: the job sets metrics_file itself, so graintune cannot measure one";
    return false;
  }
  const json& container = object.at(json::json_pointer(trainer.pointer));
  const LapInjection options{.image = exporter.image, .metrics_dir = exporter.mount_path};
  const workload::ContainerEnv env = EnvAsStored(trainer.env, container);
  Result<std::vector<std::string>> flags =
      LauncherFlags(container, workload::ScanContainer(container, &env), lap, options);
  if (!flags.ok()) {
    plan.lap = "no practice lap: " + flags.error();
    return false;
  }
  InjectLauncher(object, t.ref.spec_pointer, trainer.pointer, *flags, LauncherRole::kLap, options);
  plan.lap = "a practice lap of " + std::to_string(lap.steps) + " steps with " +
             std::to_string(lap.admission_value) + " workers runs before the trainer (" + lap.cost +
             " at the estimated step; at most " + std::to_string(lap.timeout_seconds) +
             " s); the run then keeps the value its lap measured on every host, or this one";
  return true;
}

// graintune-launcher's flags that start `trainer` (its container as stored now: `container`)
// with the start check, or why they cannot: the job sets metrics_file itself (so no exporter was
// added to hear the check), or the container has no command of its own (StartCheckFlags).
Result<std::vector<std::string>> StartCheckFlagsFor(const ContainerSites& trainer, const json& container, int value,
                                                    const LapInjection& options, bool fills) {
  if (trainer.overrides.HasKey("metrics_file"))  // no exporter (InjectExporter) to report to
    return Status::Error("the job sets metrics_file itself, so no exporter was added to report it");
  return StartCheckFlags(container, value, options, fills);
}

// The start check for the trainer `trainer` of template `t` (policy spec.startCheck): the
// launcher starts it with the check in front of MaxText, which reports to the exporter (true);
// or plan.start_check says why it does not. `fills`: the -1s graintune leaves in it are started
// with plan.workers (StartCheckFlags).
bool AddStartCheck(json& object, const TemplateSites& t, const ContainerSites& trainer,
                   const ExporterInjection& exporter, bool fills, Plan& plan) {
  // An init-container trainer is never wrapped: the exporter's insertion into initContainers has
  // moved it (its pointer and address no longer hold it).
  if (trainer.init) return false;
  const std::string name = workload::StringField(*trainer.container, "name");
  const auto say = [&](const std::string& text) {
    if (plan.start_check.find(text) == std::string::npos)
      plan.start_check += (plan.start_check.empty() ? "" : "; ") + text;
  };
  const LapInjection options{.image = exporter.image, .metrics_dir = exporter.mount_path};
  const json& container = object.at(json::json_pointer(trainer.pointer));
  Result<std::vector<std::string>> flags = StartCheckFlagsFor(trainer, container, plan.workers, options, fills);
  if (!flags.ok()) {
    say("no start check for " + name + ": " + flags.error());
    return false;
  }
  InjectLauncher(object, t.ref.spec_pointer, trainer.pointer, *flags, LauncherRole::kStartCheck, options);
  say(name + " starts through graintune-launcher with the start check: a resuming run gets "
      "the count its checkpoint saved, and MaxText is never given a count it refuses" +
      (fills ? "; where the start leaves the count to MaxText (-1), it starts with " + std::to_string(plan.workers) +
                   ", or fewer where MaxText accepts fewer"
             : std::string()));
  return true;
}

// The -1s of the container at `trainer_pointer` among plan.findings get the value the start
// check starts them with (the training count only: the check sets nothing else).
void NoteStartFill(const std::string& trainer_pointer, Plan& plan) {
  for (Finding& f : plan.findings)
    if (f.value == -1 && !IsEvalKey(f.key) &&
        (f.pointer == trainer_pointer || f.pointer.starts_with(trainer_pointer + "/")))
      f.start_fill = plan.workers;
}

}  // namespace

std::optional<LapSettings> LapFor(const Policy& policy, const TuningInputs& inputs,
                                  const std::string& ns, const ContainerSites& trainer,
                                  const ExporterInjection* exporter, std::optional<long> hosts, Plan& plan) {
  if (policy.lap.mode == LapPolicy::Mode::kOff) return std::nullopt;
  const auto none = [&](const std::string& why) {
    plan.lap = "no practice lap: " + why;
    return std::nullopt;
  };
  if (!plan.resume.pins_workers) return none("the value may change at every restart, where it is measured");
  if (plan.attempt != 0 || !plan.decision) return none("the run's value is set (" + plan.reason + ")");
  if (trainer.init || trainer.overrides.aot_compile_only) return none("the run's trainer is not a regular container");
  if (!exporter) return none("the webhook adds no exporter (--no-exporter), so nothing would measure it");
  for (const std::string& source : plan.learned_from)
    if (source.starts_with(ns + "/"))
      return none("figures learned in this namespace (" + source + ") size the value");
  const int steps = policy.lap.steps.value_or(LapSteps(inputs, *plan.decision));
  const LapCost cost = LapCostOf(inputs, steps, plan.resume.steps, hosts);
  if (std::optional<std::string> refused = LapRefusal(cost, policy.lap)) return none(*refused);
  return LapSettings{.admission_value = plan.workers,
                     .steps = steps,
                     .timeout_seconds = policy.lap.timeout_seconds.value_or(LapTimeoutSeconds(inputs, steps)),
                     .answer_wait_seconds = policy.lap.answer_wait_seconds,
                     .cost = cost.Describe()};
}

bool StartCheckCanFill(const json& object, const std::vector<TemplateSites>& found, const Policy& policy,
                       const ExporterInjection* exporter) {
  if (!policy.start_check || !exporter || policy.mode == Mode::kOff) return false;
  // (Named pointers, not a structured binding: clang 14, the fuzz build's, cannot capture one.)
  const std::pair<const TemplateSites*, const ContainerSites*> deciding = DecidingContainer(found);
  const TemplateSites* t = deciding.first;
  const ContainerSites* trainer = deciding.second;
  if (trainer->init || trainer->overrides.aot_compile_only) return false;
  // A template wrapped before (a JobSet's, for its pods) carries the launcher and the exporter,
  // whose metrics file is graintune's own.
  const bool wrapped = LauncherRoleOf(object.at(json::json_pointer(t->ref.spec_pointer))) == LauncherRole::kStartCheck;
  if (!wrapped && !StartCheckFlagsFor(*trainer, *trainer->container, 1, LapInjection{}, true).ok()) return false;
  return std::any_of(t->edits.begin(), t->edits.end(), [&](const Edit& e) {
    return !IsEvalKey(e.key) && e.container_pointer == trainer->pointer;
  });
}

void WrapTrainer(json& object, const std::vector<TemplateSites>& found, const TemplateSites& t,
                 const ContainerSites& trainer, const ExporterInjection& exporter,
                 const std::optional<LapSettings>& lap, bool start_check, bool fill_at_start, Plan& plan) {
  const std::optional<LauncherRole> carried = LauncherRoleOf(object.at(json::json_pointer(t.ref.spec_pointer)));
  if (carried == LauncherRole::kLap) {  // from its JobSet's template
    if (plan.attempt > 0) AnnotateNoLap(object, t.ref.metadata_pointer, plan.attempt, plan);
    else plan.lap = "a practice lap runs before the trainer (its template carries graintune-launcher)";
    return;
  }
  if (carried == LauncherRole::kStartCheck) {
    // This attempt's value, in place of the one its template was wrapped with.
    if (SetStartCheckValue(object[json::json_pointer(trainer.pointer)], plan.workers) && fill_at_start)
      NoteStartFill(trainer.pointer, plan);
    plan.start_check = "the trainer starts with the start check (its template carries graintune-launcher)";
    return;
  }
  // A lap only where admission writes the value, and only for the run's deciding trainer.
  const bool lapped = !fill_at_start && lap && &trainer == DecidingContainer(found).second;
  if (lapped && AddLap(object, t, trainer, *lap, exporter, plan)) return;
  if (start_check && AddStartCheck(object, t, trainer, exporter, fill_at_start, plan) && fill_at_start)
    NoteStartFill(trainer.pointer, plan);
}

void AnswerNoLap(json& object, int attempt, Plan& plan) {
  if (attempt == 0 || LauncherRoleOf(object.value("spec", json::object())) != LauncherRole::kLap) return;
  if (workload::StringEntry(workload::MetadataOf(object), "annotations", kLapValueAnnotation)) return;
  plan.touched = {"/metadata"};
  const json before = CopyTouched(object, plan.touched);
  AnnotateNoLap(object, "/metadata", attempt, plan);
  plan.patch = ScopedPatch(before, object, plan.touched);
  plan.changed = !plan.patch.empty();
}

}  // namespace graintune::webhook::planner
