#include "operator/run_records.h"

#include <algorithm>
#include <map>

#include "workload/graintune_objects.h"

namespace graintune::op {

using json = nlohmann::json;

json RunsStatus(const json& old_status, const std::vector<PodFacts>& pods) {
  auto stored = old_status.find("runs");
  std::map<std::string, RunRecord> runs =
      stored == old_status.end() ? std::map<std::string, RunRecord>{} : workload::RunsFromList(*stored);
  std::vector<const PodFacts*> pinned;
  for (const PodFacts& p : pods)
    if (p.pins_workers && p.workers > 0 && !p.checkpoint_dir.empty()) pinned.push_back(&p);
  std::sort(pinned.begin(), pinned.end(),
            [](const PodFacts* a, const PodFacts* b) { return a->attempt < b->attempt; });
  for (const PodFacts* p : pinned)
    if (!runs.count(p->checkpoint_dir)) runs[p->checkpoint_dir] = {p->workers, p->attempt};
  std::vector<std::pair<std::string, RunRecord>> ordered(runs.begin(), runs.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.first_attempt < b.second.first_attempt;
  });
  if (ordered.size() > kMaxStoredRuns)
    ordered.erase(ordered.begin(), ordered.end() - static_cast<long>(kMaxStoredRuns));
  json out = json::array();
  for (const auto& [dir, run] : ordered) out.push_back(workload::RunToJson(dir, run));
  return out;
}

std::optional<PinnedAttempt> NewestPinnedAttempt(const std::map<std::string, RunRecord>& runs,
                                                 const std::vector<PodFacts>& pods) {
  const PodFacts* newest = nullptr;
  for (const PodFacts& p : pods)
    if (!newest || p.attempt > newest->attempt) newest = &p;
  if (!newest || !newest->pins_workers || newest->checkpoint_dir.empty()) return std::nullopt;
  auto run = runs.find(newest->checkpoint_dir);
  if (run == runs.end()) return std::nullopt;
  return PinnedAttempt{newest->attempt, newest->checkpoint_dir, run->second};
}

std::optional<EndedEarly> NewestEndedEarly(const std::vector<PodFacts>& pods) {
  std::optional<EndedEarly> newest;
  for (const PodFacts& p : pods) {
    if (p.phase != "Succeeded" || !p.last_step || !p.steps || *p.last_step >= *p.steps - 1) continue;
    if (!newest || p.attempt > newest->attempt) newest = EndedEarly{p.attempt, p.name, *p.last_step, *p.steps};
  }
  return newest;
}

json ToJson(const EndedEarly& e) {
  return {{"attempt", e.attempt}, {"pod", e.pod}, {"lastStep", e.last_step}, {"steps", e.steps}};
}

}  // namespace graintune::op
