#include "operator/run_records.h"

#include <algorithm>
#include <map>


namespace graintune::op {

std::vector<workload::RunStatus> RunsStatus(const workload::GrainTuningStatus& old_status,
                                            const std::vector<PodFacts>& pods) {
  std::map<std::string, RunRecord> runs = workload::RunRecordsOf(old_status.runs);
  std::vector<const PodFacts*> pinned;
  for (const PodFacts& p : pods)
    // A pod still waiting for its lap's answer does not know its run's value yet.
    if (p.pins_workers && p.workers > 0 && !p.checkpoint_dir.empty() && !(p.AwaitsLapAnswer() && p.Alive()))
      pinned.push_back(&p);
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
  std::vector<workload::RunStatus> out;
  for (const auto& [dir, run] : ordered) out.push_back(workload::RunStatusOf(dir, run));
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

}  // namespace graintune::op
