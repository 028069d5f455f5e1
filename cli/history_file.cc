#include "cli/history_file.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tuner/practice_lap.h"

namespace graintune::cli {

using nlohmann::json;

namespace {

// One entry; `label` names it in errors ("attempt 2", "host 0").
Result<Trial> ParseAttempt(const json& entry, int attempt, double tokens_per_step,
                           const std::string& label) {
  const std::string where = label + ": ";
  if (!entry.is_object()) return Status::Error(where + "must be an object");
  const json workers = entry.value("workers", json());
  if (!workers.is_number_integer() || workers.get<long long>() < 1 || workers.get<long long>() > 4096)
    return Status::Error(where + "\"workers\" must be an integer in [1, 4096]");
  const json oom = entry.value("oom_killed", json(false));
  if (!oom.is_boolean()) return Status::Error(where + "\"oom_killed\" must be true or false");
  const json warmup = entry.value("warmup_steps", json(2));
  if (!warmup.is_number_integer() || warmup.get<long long>() < 0 || warmup.get<long long>() > 1000)
    return Status::Error(where + "\"warmup_steps\" must be an integer in [0, 1000]");
  const json memory = entry.value("worker_memory_bytes", json(0));
  if (!memory.is_number() || memory.get<double>() < 0)
    return Status::Error(where + "\"worker_memory_bytes\" must be a number >= 0");
  const json busy = entry.value("worker_busy_fraction", json(-1));
  if (!busy.is_number() || busy.get<double>() > 1 || (busy.get<double>() < 0 && busy.get<double>() != -1))
    return Status::Error(where + "\"worker_busy_fraction\" must be a number in [0, 1]");

  Trial trial;
  if (oom.get<bool>()) {
    trial.oom_killed = true;
  } else {
    const json steps = entry.value("step_seconds", json());
    if (!steps.is_array()) return Status::Error(where + "\"step_seconds\" must be an array of numbers");
    std::vector<double> seconds;
    for (const json& s : steps) {
      if (!s.is_number()) return Status::Error(where + "\"step_seconds\" must hold numbers only");
      seconds.push_back(s.get<double>());
    }
    Result<Trial> summary = SummarizeSteps(seconds, tokens_per_step, warmup.get<int>());
    if (!summary.ok()) return Status::Error(where + summary.error());
    trial = *summary;
  }
  trial.attempt = attempt;
  trial.workers = workers.get<int>();
  trial.worker_memory_bytes = memory.get<double>();
  if (!trial.oom_killed) trial.worker_busy_fraction = busy.get<double>();
  return trial;
}

}  // namespace

Result<std::vector<Trial>> ParseHistory(const std::string& text, double tokens_per_step_per_host) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Error("not valid JSON");
  if (!doc.is_array()) return Status::Error("must be a JSON array of attempts, oldest first");
  std::vector<Trial> trials;
  for (size_t i = 0; i < doc.size(); ++i) {
    Result<Trial> trial = ParseAttempt(doc[i], static_cast<int>(i), tokens_per_step_per_host,
                                       "attempt " + std::to_string(i));
    if (!trial.ok()) return trial.status();
    trials.push_back(*trial);
  }
  return trials;
}

Result<std::vector<Trial>> ParseLap(const std::string& text, double tokens_per_step_per_host) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Error("not valid JSON");
  if (doc.is_object()) {
    Result<Trial> trial = ParseAttempt(doc, 0, tokens_per_step_per_host, "lap");
    if (!trial.ok()) return trial.status();
    return std::vector<Trial>{*trial};
  }
  if (!doc.is_array() || doc.empty())
    return Status::Error("must be one lap entry (a JSON object) or an array of them, one per host");
  if (doc.size() > static_cast<size_t>(kMaxLapHosts))
    return Status::Error("more than " + std::to_string(kMaxLapHosts) + " hosts");
  std::vector<Trial> hosts;
  for (size_t i = 0; i < doc.size(); ++i) {
    Result<Trial> trial = ParseAttempt(doc[i], static_cast<int>(i), tokens_per_step_per_host,
                                       "host " + std::to_string(i));
    if (!trial.ok()) return trial.status();
    hosts.push_back(*trial);
  }
  return hosts;
}

Result<std::vector<Trial>> ReadTrialsFile(
    const std::string& path, double tokens_per_step_per_host,
    Result<std::vector<Trial>> (*parse)(const std::string&, double)) {
  std::ifstream file(path);
  if (!file) return Status::Error("cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<Trial>> trials = parse(text.str(), tokens_per_step_per_host);
  if (!trials.ok()) return Status::Error(path + ": " + trials.error());
  return trials;
}

Result<std::vector<Trial>> ReadHistoryFile(const std::string& path, double tokens_per_step_per_host) {
  return ReadTrialsFile(path, tokens_per_step_per_host, ParseHistory);
}

}  // namespace graintune::cli
