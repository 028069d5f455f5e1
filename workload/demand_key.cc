#include "workload/demand_key.h"

#include <cstdint>
#include <cstdio>
#include <string_view>

namespace graintune::workload {
namespace {

// Settings that change what is read, where things are written or how a run is watched, not
// the step the chips compute.
constexpr std::string_view kStepNeutral[] = {
    "run_name", "base_output_directory", "dataset_path", "dataset_name", "dataset_type",
    "train_split", "eval_split", "tokenizer_path", "tokenizer_type", "tokenize_train_data",
    "tokenize_eval_data", "train_data_columns", "eval_data_columns", "add_bos", "add_eos",
    "enable_data_shuffling", "data_shuffle_seed", "init_weights_seed", "steps", "log_period",
    "enable_checkpointing", "async_checkpointing", "checkpoint_period", "load_parameters_path",
    "load_full_state_path", "metrics_file", "gcs_metrics", "save_config_to_gcs",
    "enable_goodput_recording", "monitor_goodput", "profiler", "upload_all_profiler_results",
    "learning_rate", "warmup_steps_fraction", "learning_rate_schedule_steps",
    "cosine_learning_rate_final_fraction", "skip_first_n_steps_for_profiler"};
// Whole families of them: Grain's own settings (the value graintune writes among them), the
// evaluation loop, Hugging Face sources, checkpoint and profiler knobs.
constexpr std::string_view kStepNeutralPrefixes[] = {
    "grain_", "eval_", "hf_", "checkpoint_", "profiler_", "enable_tensorboard"};

// FNV-1a, 64 bits: stable across builds and machines (std::hash is not promised to be), as
// keys written by one graintune version are read by the next.
std::uint64_t Fnv1a(std::string_view text, std::uint64_t h) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string Shown(const std::map<std::string, std::string>& settings, const char* key,
                  const char* missing) {
  auto it = settings.find(key);
  if (it == settings.end()) return missing;
  return it->second.size() <= 64 ? it->second : it->second.substr(0, 64);
}

}  // namespace

bool LeavesTheStepAlone(const std::string& key) {
  for (std::string_view k : kStepNeutral)
    if (key == k) return true;
  for (std::string_view p : kStepNeutralPrefixes)
    if (std::string_view(key).substr(0, p.size()) == p) return true;
  return false;
}

std::string DemandKey(const std::map<std::string, std::string>& settings,
                      const std::string& config_path, int chips_per_host, const HostShape& host) {
  if (host.machine_type.empty() || host.machine_type.size() > 128) return "";
  std::uint64_t h = Fnv1a(config_path, 14695981039346656037ULL);
  for (const auto& [key, value] : settings) {  // sorted: the order the job wrote them in is not
    if (LeavesTheStepAlone(key)) continue;  // the shown settings too: they may be cut short
    h = Fnv1a(value, Fnv1a("=", Fnv1a(key, Fnv1a("\n", h))));
  }
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(h));
  const int chips = chips_per_host > 0 ? chips_per_host : host.tpu_chips;
  return Shown(settings, "model_name", "default") + " batch " +
         Shown(settings, "per_device_batch_size", "default") + " seq " +
         Shown(settings, "max_target_length", "default") + ", " + std::to_string(chips) + "x " +
         ToString(host.generation) + " on " + host.machine_type + ", settings " + hash;
}

}  // namespace graintune::workload
