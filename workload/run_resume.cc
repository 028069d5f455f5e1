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
// cannot hide it) MaxText's default. nullopt: unknown.
class EffectiveConfig {
 public:
  explicit EffectiveConfig(const RunResumeQuery& q) : q_(q) {}

  std::optional<std::string> Get(const std::string& key) const {
    if (std::optional<std::string> v = q_.overrides.Value(key)) return v;
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

  static bool IsMaxTextBase(const std::string& path) {
    return path == "base.yml" || EndsWith(path, "/base.yml");
  }

 private:
  const RunResumeQuery& q_;
};

std::string CheckpointDir(const EffectiveConfig& config, const std::string& jobset_name,
                          bool& per_start_minute) {
  per_start_minute = false;
  std::optional<std::string> base = config.Get("base_output_directory");
  std::optional<std::string> run = config.Get("run_name");
  if (!base) return "";
  std::string run_name = run.value_or("");
  if (!run || run->empty()) {
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
  return dir + "/" + run_name + "/checkpoints";
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

RunResume ResumeOf(const RunResumeQuery& query) {
  const EffectiveConfig config(query);
  RunResume r;
  bool per_start_minute = false;
  r.checkpoint_dir = CheckpointDir(config, query.jobset_name, per_start_minute);
  if (std::optional<std::string> steps = config.Get("steps"))
    if (std::optional<double> n = ParseFiniteNumber(*steps); n && *n >= 0 && *n < 1e15)
      r.steps = static_cast<long>(*n);

  const std::optional<std::string> dataset_type = config.Get("dataset_type");
  if (dataset_type && *dataset_type != "grain") {
    r.pins_workers = false;
    r.why = "dataset_type is " + *dataset_type + ": no Grain iterator is checkpointed";
    return r;
  }
  const std::optional<std::string> checkpointing = config.Get("enable_checkpointing");
  const std::optional<bool> checkpoints = checkpointing ? ParseBool(*checkpointing) : std::nullopt;
  if (checkpoints == false) {
    r.pins_workers = false;
    r.why = "checkpointing is off (enable_checkpointing=" + *checkpointing +
            "): no attempt restores Grain's iterator";
    return r;
  }
  const std::optional<std::string> elastic_text = config.Get("grain_use_elastic_iterator");
  const std::optional<bool> elastic = elastic_text ? ParseBool(*elastic_text) : std::nullopt;
  if (elastic == true) {
    r.pins_workers = false;
    r.why = "the elastic Grain iterator (grain_use_elastic_iterator=true) checkpoints one global "
            "position, which any worker count restores";
    return r;
  }
  r.pins_workers = true;
  if (!checkpoints || !elastic || !dataset_type) {
    std::string unknown = !dataset_type    ? "dataset_type"
                          : !checkpoints   ? "enable_checkpointing"
                                           : "grain_use_elastic_iterator";
    r.why = "graintune cannot read " + unknown +
            (query.view == ConfigFileView::kUnreadable
                 ? " (the config " + query.overrides.config->path + " is not from a ConfigMap)"
                 : "") +
            ", so a resume may restore Grain's iterator: the run's value is held";
    return r;
  }
  r.why = "this run checkpoints Grain's iterator (one state per worker) to " +
          (r.checkpoint_dir.empty() ? std::string("its checkpoint directory") : r.checkpoint_dir) +
          " and a resume must restore it with the same grain_worker_count";
  if (per_start_minute)
    r.why += "; run_name is unset, so the directory is named by the start minute and an attempt "
             "restarted within that minute resumes it";
  return r;
}

nlohmann::json ToJson(const RunResume& resume) {
  nlohmann::json j = {{"pins_workers", resume.pins_workers},
                      {"checkpoint_dir", resume.checkpoint_dir},
                      {"why", resume.why}};
  if (resume.steps) j["steps"] = *resume.steps;
  return j;
}

}  // namespace graintune::workload
