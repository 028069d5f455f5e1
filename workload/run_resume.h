// RunResume: whether an attempt of a MaxText container may restore a Grain data iterator from a
// checkpoint, and which checkpoint directory (which run) it writes, read from the container's
// effective MaxText config the way MaxText reads it.
//
// Why it matters (checked on maxtext 0.2.5 with grain 0.2.18): MaxText saves Grain's iterator
// state with every checkpoint, one state per worker process, and a run resumed with another
// grain_worker_count stops training early (IndexError inside the iterator's set_state) and exits
// 0. So an attempt that may restore an iterator must get its run's value; only where nothing
// restores one may the value change.
//
// The effective config, highest first: argv `key=value` words and M_<KEY> env (ContainerOverrides;
// the later word wins, argv over env; a word graintune cannot expand makes what it may carry
// unknown), the mounted YAML and its base_config chain (ConfigValues, from a ConfigMap), MaxText's
// own defaults (kMaxTextDefaults, its base.yml). A config file MaxText reads that graintune
// cannot (a YAML baked into the image, or a base_config outside the ConfigMap) makes every key it
// might set unknown.
//
// The rule: the value is pinned unless the config says, for sure, one of (each from maxtext
// 0.2.5's code, cited in run_resume.cc)
//   - the container runs train_compile only (ahead-of-time compile: no data, no checkpoint),
//   - the input is not Grain (dataset_type, as set or by default, is not "grain"),
//   - checkpointing is off (enable_checkpointing false),
//   - the emergency or multi-tier checkpoint manager is on (it saves no iterator),
//   - the elastic iterator is on (grain_use_elastic_iterator true: one global index, not one
//     state per worker).
// Anything unknown or unparseable holds the value (pins_workers stays true).
//
// The checkpoint directory is {base_output_directory}/{run_name}/checkpoints, as MaxText derives
// it (an empty base_output_directory is "maxtext_output" under the trainer's working directory).
// run_name, when unset, is $JOBSET_NAME (the container's env: a literal, or a field of the JobSet
// the object belongs to, as xpk sets it), else MaxText's "{model_name}_{%Y-%m-%d-%H-%M}": a directory per start minute,
// shown with a placeholder (an attempt restarted within the same minute still resumes it, so the
// value is pinned there too).
//
// Pure: plain values in, a plain value out; never throws.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workload/container_overrides.h"
#include "workload/mounted_config.h"

namespace graintune::workload {

// The maxtext and grain versions the rule above was checked against (shown to users).
inline constexpr char kCheckedMaxTextVersions[] = "maxtext 0.2.5, grain 0.2.18";

// The keys of MaxText's base.yml (0.2.5) graintune reads, with their default values.
extern const std::map<std::string, std::string> kMaxTextDefaults;

// What graintune could read of the MaxText config file a container passes.
enum class ConfigFileView {
  kNone,         // no config argument, or MaxText's own base.yml: the defaults apply
  kRead,         // read from a ConfigMap (ConfigValues given)
  kUnreadable,   // a file graintune cannot read (in the image): its keys are unknown
};

struct RunResumeQuery {
  const ContainerOverrides& overrides;
  const ConfigValues* config = nullptr;  // with kRead
  ConfigFileView view = ConfigFileView::kNone;
  // $JOBSET_NAME as MaxText will see it: the container's literal env value, else (set from a
  // field, as xpk does) the name of the JobSet the object belongs to; "" when unset.
  std::string jobset_name;
  // The counts graintune wrote on an earlier admission of this object (its applied annotations,
  // on an object it manages). A start whose count is one of them sees graintune's value as a
  // start that says -1 does, so the API server's reinvocation judges the starts the first
  // admission judged.
  std::optional<int> applied_workers;
  std::optional<int> applied_eval_workers;

  // This query for `start` (ContainerOverrides::OfStart), everything else kept.
  RunResumeQuery ForStart(const ContainerOverrides& start) const {
    return {start, config, view, jobset_name, applied_workers, applied_eval_workers};
  }
};

struct RunResume {
  bool pins_workers = true;
  std::string checkpoint_dir;    // as MaxText derives it; "" only when base_output_directory is unknown
  std::string why;               // one sentence for reasons, warnings and `explain`
  std::optional<long> steps;     // the configured `steps`, when known (a run that ends before
                                 // steps - 1 ended early)
};

// For a container whose script starts MaxText more than once (ContainerOverrides::starts), each
// start that may see graintune's grain_worker_count (SeesGraintunesValue) is judged on its own
// config, and the value pins when any of them pins (two pinning starts with different
// directories: pinned, no directory).
RunResume ResumeOf(const RunResumeQuery& query);

// Whether `key` may hold the value graintune writes in the config of `query`: -1, the count
// graintune applied to this object (RunResumeQuery::applied_*), or a value graintune cannot tell.
bool SeesGraintunesValue(const RunResumeQuery& query, const std::string& key);

// One key of the effective config the rule above reads (overrides, mounted file, MaxText's
// default); nullopt when graintune cannot tell.
std::optional<std::string> EffectiveValue(const RunResumeQuery& query, const std::string& key);

// How a config argument is seen: MaxText's own base.yml (any path ending in configs/base.yml,
// or plain base.yml) is the defaults; otherwise kRead when `config` was read, else kUnreadable.
// No config argument at all: kNone.
ConfigFileView ViewOfConfig(const ContainerOverrides& overrides, const ConfigValues* config);

// $JOBSET_NAME in `container`'s env: its literal value, "" when it comes from elsewhere (xpk's
// fieldRef to the JobSet's name), nullopt when the container does not set it.
std::optional<std::string> JobSetNameEnv(const nlohmann::json& container);

// {"pins_workers": bool, "checkpoint_dir": "...", "why": "..."} (and "steps" when known), for
// `graintune explain -o json`.
nlohmann::json ToJson(const RunResume& resume);

}  // namespace graintune::workload
