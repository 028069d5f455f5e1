#include "workload/run_resume.h"

#include <algorithm>
#include <cctype>

#include "base/numbers.h"

namespace graintune::workload {
namespace {

// MaxText's booleans as its config loader accepts them (str2bool for M_ env, OmegaConf for
// argv); nullopt when it is neither.
std::optional<bool> ParseBool(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"true", "t", "yes", "y", "on", "1"})
    if (text == yes) return true;
  for (const char* no : {"false", "f", "no", "n", "off", "0"})
    if (text == no) return false;
  return std::nullopt;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// One key of the effective config: the overrides, then the mounted file, then (when the file
// cannot hide it) MaxText's default. nullopt: unknown (unknown_why() says why, when a word did).
class EffectiveConfig {
 public:
  explicit EffectiveConfig(const RunResumeQuery& q) : q_(q) {}

  std::optional<std::string> Get(const std::string& key) const {
    const KeyState state = q_.overrides.Lookup(key);
    if (state.kind == KeyState::Kind::kSet) return state.value;
    if (state.kind == KeyState::Kind::kUnknown) {
      if (why_.empty()) why_ = state.why;
      return std::nullopt;
    }
    if (q_.view == ConfigFileView::kUnreadable) return std::nullopt;
    if (q_.config) {
      if (auto it = q_.config->find(key); it != q_.config->end()) return it->second;
      // A base_config other than MaxText's own may set it.
      if (auto base = q_.config->find("base_config");
          base != q_.config->end() && !IsMaxTextBase(base->second))
        return std::nullopt;
    }
    if (auto it = kMaxTextDefaults.find(key); it != kMaxTextDefaults.end()) return it->second;
    return std::nullopt;
  }
  // Why the first key a word made unknown is unknown ("" when none was).
  const std::string& unknown_why() const { return why_; }

  static bool IsMaxTextBase(const std::string& path) {
    return path == "base.yml" || EndsWith(path, "/base.yml");
  }

 private:
  const RunResumeQuery& q_;
  mutable std::string why_;
};

std::string CheckpointDir(const EffectiveConfig& config, const std::string& jobset_name,
                          bool& per_start_minute) {
  per_start_minute = false;
  std::optional<std::string> base = config.Get("base_output_directory");
  std::optional<std::string> run = config.Get("run_name");
  if (!base || !run) return "";  // unknown: no run is recorded or matched under it
  std::string run_name = *run;
  if (run->empty()) {
    if (!jobset_name.empty()) {
      run_name = jobset_name;
    } else {
      per_start_minute = true;
      run_name = config.Get("model_name").value_or("<model_name>") + "_<start minute>";
    }
  }
  // MaxText makes an empty base_output_directory "maxtext_output" under its working directory.
  std::string dir = base->empty() ? "maxtext_output" : *base;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  dir += "/" + run_name + "/checkpoints";
  // A `$` left in it is a shell variable no one expanded (a literal argv element, or a word
  // graintune could not expand): not a directory graintune can name.
  if (dir.find('$') != std::string::npos) return "";
  return dir;
}

}  // namespace

// maxtext 0.2.5's base.yml values for the keys read here.
const std::map<std::string, std::string> kMaxTextDefaults = {
    {"dataset_type", "synthetic"},
    {"enable_checkpointing", "true"},
    {"grain_use_elastic_iterator", "false"},
    {"base_output_directory", ""},
    {"run_name", ""},
    {"model_name", "default"},
    {"enable_emergency_checkpoint", "false"},
    {"enable_multi_tier_checkpointing", "false"},
    {"grain_file_type", "arrayrecord"},
    {"grain_train_files", ""},
    {"grain_eval_files", ""},
};

ConfigFileView ViewOfConfig(const ContainerOverrides& overrides, const ConfigValues* config) {
  if (!overrides.config || EffectiveConfig::IsMaxTextBase(overrides.config->path))
    return ConfigFileView::kNone;
  return config ? ConfigFileView::kRead : ConfigFileView::kUnreadable;
}

std::optional<std::string> JobSetNameEnv(const nlohmann::json& container) {
  auto env = container.find("env");
  if (env == container.end() || !env->is_array()) return std::nullopt;
  std::optional<std::string> value;
  for (const nlohmann::json& var : *env) {
    if (!var.is_object()) continue;
    auto name = var.find("name");
    if (name == var.end() || !name->is_string() || *name != "JOBSET_NAME") continue;
    auto v = var.find("value");
    value = v != var.end() && v->is_string() ? v->get<std::string>() : "";
  }
  return value;
}

namespace {

// The rules that free the value, each from MaxText 0.2.5's own code. A rule applies only when
// the config says so for sure; an unknown key never frees the value.
struct FreeingRule {
  const char* key;
  bool boolean;  // a value MaxText does not read as a boolean is unknown (it refuses to start)
  // Whether `value` (as set) frees the value; the reason when it does.
  std::optional<std::string> (*frees)(const std::string& value);
};

std::optional<std::string> NotGrain(const std::string& value) {
  // common/checkpointing.py save_checkpoint (lines 1339-1345) adds the "iter" checkpointable
  // only when dataset_type == "grain"; load_state_if_possible (lines 736-747) restores it only
  // then. hf, tfds, c4_mlperf, olmo_grain and synthetic save no iterator.
  if (value == "grain") return std::nullopt;
  return "dataset_type is " + value + ": no Grain iterator is checkpointed";
}

std::optional<std::string> CheckpointingOff(const std::string& value) {
  // utils/train_utils.py create_checkpoint_manager (lines 124-141): with
  // enable_checkpointing false the manager gets no directory and saves nothing.
  if (ParseBool(value) != false) return std::nullopt;
  return "checkpointing is off (enable_checkpointing=" + value +
         "): no attempt restores Grain's iterator";
}

std::optional<std::string> EmergencyManager(const std::string& value) {
  // utils/train_utils.py create_checkpoint_manager (lines 107-123) uses Orbax's emergency
  // (or replicator) manager when this is on; common/checkpointing.py save_checkpoint (lines
  // 1325-1327) saves only the train state through it, and load_state_if_possible (lines
  // 725-734) restores it with no data iterator.
  if (ParseBool(value) != true) return std::nullopt;
  return "the emergency checkpoint manager saves and restores no Grain iterator state";
}

std::optional<std::string> ElasticIterator(const std::string& value) {
  if (ParseBool(value) != true) return std::nullopt;
  return "the elastic Grain iterator (grain_use_elastic_iterator=true) checkpoints one global "
         "position, which any worker count restores";
}

constexpr FreeingRule kFreeingRules[] = {
    {"dataset_type", false, NotGrain},
    {"enable_checkpointing", true, CheckpointingOff},
    {"enable_multi_tier_checkpointing", true, EmergencyManager},
    {"enable_emergency_checkpoint", true, EmergencyManager},
    {"grain_use_elastic_iterator", true, ElasticIterator},
};

// Why the value is held although the config was read: the first key that is unknown.
std::string HeldBecauseUnknown(const RunResumeQuery& query, const std::string& key,
                               const std::string& word_why) {
  const KeyState state = query.overrides.Lookup(key);
  return "graintune cannot read " + key +
         (state.kind == KeyState::Kind::kUnknown ? " (" + state.why + ")"
          : query.view == ConfigFileView::kUnreadable
              ? " (the config " + query.overrides.config->path + " is not from a ConfigMap)"
              : !word_why.empty() ? " (" + word_why + ")" : "") +
         ", so a resume may restore Grain's iterator: the run's value is held";
}

}  // namespace

namespace {

// Why a run that holds its value has no directory graintune can name: no run is recorded or
// matched for it, so a new workload resuming it is not recognised.
std::string UnreadDirectory(const RunResumeQuery& query, const EffectiveConfig& config) {
  for (const char* key : {"base_output_directory", "run_name"}) {
    if (config.Get(key)) continue;
    const KeyState state = query.overrides.Lookup(key);
    return std::string("graintune cannot read its directory (") + key +
           (state.kind == KeyState::Kind::kUnknown ? ": " + state.why : std::string(" is not known")) +
           "), so no run is recorded under it";
  }
  return "graintune cannot read its directory (it holds a variable no one expands), so no run is "
         "recorded under it";
}

RunResume ResumeOfOneStart(const RunResumeQuery& query) {
  const EffectiveConfig config(query);
  RunResume r;
  bool per_start_minute = false;
  r.checkpoint_dir = CheckpointDir(config, query.jobset_name, per_start_minute);
  if (std::optional<std::string> steps = config.Get("steps"))
    if (std::optional<double> n = ParseFiniteNumber(*steps); n && *n >= 0 && *n < 1e15)
      r.steps = static_cast<long>(*n);

  // trainers/pre_train/train_compile.py compiles the train step for a topology and returns:
  // it builds no input pipeline and no checkpoint manager.
  if (query.overrides.aot_compile_only) {
    r.pins_workers = false;
    r.why = "train_compile compiles ahead of time: it reads no data and checkpoints nothing";
    return r;
  }
  std::optional<std::string> first_unknown;
  for (const FreeingRule& rule : kFreeingRules) {
    const std::optional<std::string> value = config.Get(rule.key);
    if (!value || (rule.boolean && !ParseBool(*value))) {
      if (!first_unknown) first_unknown = rule.key;
      continue;
    }
    if (std::optional<std::string> why = rule.frees(*value)) {
      r.pins_workers = false;
      r.why = std::move(*why);
      return r;
    }
  }
  r.pins_workers = true;
  if (first_unknown) {
    r.why = HeldBecauseUnknown(query, *first_unknown, config.unknown_why());
    return r;
  }
  r.why = "this run checkpoints Grain's iterator (one state per worker) to " +
          (r.checkpoint_dir.empty() ? std::string("its checkpoint directory") : r.checkpoint_dir) +
          " and a resume must restore it with the same grain_worker_count";
  if (per_start_minute)
    r.why += "; run_name is unset, so the directory is named by the start minute and an attempt "
             "restarted within that minute resumes it";
  if (r.checkpoint_dir.empty()) r.why += "; " + UnreadDirectory(query, config);
  return r;
}

}  // namespace

bool SeesGraintunesValue(const RunResumeQuery& query, const std::string& key) {
  const std::optional<std::string> value = EffectiveValue(query, key);
  if (!value) return true;
  const std::optional<double> n = ParseFiniteNumber(*value);
  if (!n || *n == -1) return true;
  const std::optional<int>& applied =
      key == "grain_worker_count_eval" ? query.applied_eval_workers : query.applied_workers;
  return applied && *n == *applied;
}

RunResume ResumeOf(const RunResumeQuery& query) {
  if (query.overrides.starts <= 1) return ResumeOfOneStart(query);
  // A script that starts MaxText more than once: each start that sees the value decides for
  // itself, and the value holds when any of them restores an iterator (a smoke run with
  // checkpointing off never frees the run that follows it).
  std::vector<RunResume> seen;
  std::vector<size_t> numbers;
  for (size_t i = 0; i < query.overrides.starts; ++i) {
    const ContainerOverrides start = query.overrides.OfStart(i);
    const RunResumeQuery q = query.ForStart(start);
    if (!SeesGraintunesValue(q, "grain_worker_count")) continue;
    seen.push_back(ResumeOfOneStart(q));
    numbers.push_back(i + 1);
  }
  if (seen.empty()) return ResumeOfOneStart(query);
  const std::string of = " of " + std::to_string(query.overrides.starts);
  const RunResume* pinned = nullptr;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i].pins_workers) continue;
    if (pinned && pinned->checkpoint_dir != seen[i].checkpoint_dir) {
      RunResume both = *pinned;
      both.checkpoint_dir.clear();
      both.why = "the script starts MaxText " + std::to_string(query.overrides.starts) +
                 " times and two starts restore Grain's iterator from different directories (" +
                 pinned->checkpoint_dir + ", " + seen[i].checkpoint_dir +
                 "): graintune cannot tell which is the run, and the value holds";
      return both;
    }
    if (!pinned) {
      pinned = &seen[i];
      seen[i].why = "MaxText start " + std::to_string(numbers[i]) + of + ": " + seen[i].why;
    }
  }
  if (pinned) return *pinned;
  RunResume last = seen.back();
  last.why = "no MaxText start of the script restores an iterator; the last (start " +
             std::to_string(numbers.back()) + of + "): " + last.why;
  return last;
}

std::optional<std::string> EffectiveValue(const RunResumeQuery& query, const std::string& key) {
  return EffectiveConfig(query).Get(key);
}

nlohmann::json ToJson(const RunResume& resume) {
  nlohmann::json j = {{"pins_workers", resume.pins_workers},
                      {"checkpoint_dir", resume.checkpoint_dir},
                      {"why", resume.why}};
  if (resume.steps) j["steps"] = *resume.steps;
  return j;
}

}  // namespace graintune::workload
