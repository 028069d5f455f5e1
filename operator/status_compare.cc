#include "operator/status_compare.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

// Status without the fields that change on every write, to tell real changes apart.
json Comparable(json status) {
  if (status.contains("recommendation")) status["recommendation"].erase("decidedAt");
  if (status.contains("conditions"))
    for (json& c : status["conditions"]) c.erase("lastTransitionTime");
  return status;
}

}  // namespace

bool StatusEquivalent(const json& a, const json& b) { return Comparable(a) == Comparable(b); }

namespace {

// A trial as Decide() and the webhook judge it: which attempt, how many workers, whether it
// was OOMKilled or data-bound. Its running figures are left out.
json TrialVerdict(const json& trial) {
  if (!trial.is_object()) return trial;
  json verdict = json::object();
  for (const char* field : {"attempt", "workers", "oomKilled", "dataBound"})
    if (trial.contains(field)) verdict[field] = trial[field];
  // Its first memory figure is news: later workloads of the dataset are sized with it.
  verdict["measuredMemory"] = trial.contains("workerMemoryBytes");
  return verdict;
}

// Status with only what is not progress: trials cut to their verdicts, no learned rate, no
// recommendation reason (it quotes the figures), no renewal timestamps.
json Verdicts(json status) {
  status = Comparable(std::move(status));
  if (!status.is_object()) return status;
  if (status.contains("trials") && status["trials"].is_array())
    for (json& t : status["trials"]) t = TrialVerdict(t);
  if (status.contains("lastTrial")) status["lastTrial"] = TrialVerdict(status["lastTrial"]);
  // A learned rate that appears switches later workloads of the dataset from the default
  // profile to it: news. A learned rate that moves is progress.
  if (status.contains("learnedTokensPerSecondPerWorker")) status["learnedTokensPerSecondPerWorker"] = true;
  if (status.contains("learned") && status["learned"].is_object())
    for (auto& [key, value] : status["learned"].items())
      if (value.is_number()) value = true;  // which figures exist is news, their drift progress
  if (status.contains("recommendation") && status["recommendation"].is_object())
    status["recommendation"].erase("reason");
  if (status.contains("nextRun") && status["nextRun"].is_object()) status["nextRun"].erase("reason");
  return status;
}

}  // namespace

bool TrialsDiffer(const json& stored, const json& desired, const std::set<int>& attempts) {
  auto trial_of = [](const json& status, int attempt) -> json {
    auto trials = status.find("trials");
    if (trials == status.end() || !trials->is_array()) return nullptr;
    for (const json& t : *trials)
      if (t.is_object() && t.contains("attempt") && t["attempt"].is_number_integer() &&
          t["attempt"].get<int>() == attempt)
        return t;
    return nullptr;
  };
  for (int attempt : attempts)
    if (trial_of(stored, attempt) != trial_of(desired, attempt)) return true;
  return false;
}

bool ProgressOnly(const json& stored, const json& desired) {
  return !StatusEquivalent(stored, desired) && Verdicts(stored) == Verdicts(desired);
}

}  // namespace graintune::op
