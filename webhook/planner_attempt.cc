#include "webhook/planner_attempt.h"

#include <algorithm>

#include "base/numbers.h"
#include "workload/identity.h"

namespace graintune::webhook::planner {

AttemptQuery QueryFor(const json& object_meta, const std::map<std::string, std::string>& labels,
                      WorkloadKind kind, const std::vector<TemplateSites>& found,
                      const TemplateSites& primary, const ContainerSites& trainer) {
  AttemptQuery query;
  query.attempt = workload::AttemptOf(object_meta);
  query.has_restart_label = labels.count(workload::kRestartAttemptLabel) > 0;
  query.announces_first_attempt = kind == WorkloadKind::kJobSet;
  // (A -1 graintune cannot rewrite holds no value it applied: with nothing else, none was.)
  query.only_applied_values =
      std::any_of(found.begin(), found.end(),
                  [](const TemplateSites& t) { return std::any_of(t.edits.begin(), t.edits.end(), Writes); }) &&
      std::all_of(found.begin(), found.end(), [](const TemplateSites& t) {
        return std::all_of(t.edits.begin(), t.edits.end(),
                           [](const Edit& e) { return e.before != "-1" && e.before != "(unset)"; });
      });
  query.pins_workers = trainer.resume.pins_workers;
  query.checkpoint_dir = trainer.resume.checkpoint_dir;
  if (query.only_applied_values)
    for (const Edit& e : primary.edits)
      if (!IsEvalKey(e.key) && e.container_pointer == trainer.pointer) {
        query.written_workers = ParseInt(e.before);
        break;
      }
  // A JobSet's restart: its Jobs and pods come from templates holding the value graintune gave
  // attempt 0 (the fallback in WritePlan); unless the run keeps its value, that value is not
  // this attempt's, so it is re-picked.
  if (query.only_applied_values && query.has_restart_label && !query.pins_workers &&
      primary.annotations.applied_attempt != std::optional<int>(query.attempt))
    query.only_applied_values = false;
  return query;
}

int CountJobRetries(const json& object_meta, const std::map<std::string, std::string>& labels,
                    const std::string& ns, workload::JobStatusSource& jobs, AttemptQuery& query) {
  auto job = labels.find("batch.kubernetes.io/job-name");
  if (job == labels.end()) job = labels.find("job-name");
  if (job == labels.end()) return 0;
  if (const std::string* counted =
          workload::StringEntry(object_meta, "annotations", workload::kFailedPodsCountedAnnotation))
    if (std::optional<int> n = ParseInt(*counted); n && *n > 0 && *n <= query.attempt)
      query.attempt -= *n;
  const std::optional<int> failed = jobs.FailedPods(ns, job->second);
  if (!failed || *failed <= 0) return 0;
  query.attempt += *failed;
  return *failed;
}

std::optional<TuningHistory> HistoryOf(workload::HistorySource& source, const std::string& ns,
                                       const std::string& tuning_key, const AttemptQuery& query,
                                       std::vector<std::string>& warnings) {
  std::optional<TuningHistory> history;
  if (Result<std::optional<TuningHistory>> h = source.Lookup(ns, tuning_key); h.ok()) {
    history = *h;
  } else {
    warnings.push_back("graintune: history unavailable (" + h.error() +
                       "); deciding without earlier trials");
  }
  // A run this key has not recorded may have been started by another workload.
  if (query.pins_workers && !query.checkpoint_dir.empty() &&
      query.checkpoint_dir.find('<') == std::string::npos &&
      !(history && history->runs.count(query.checkpoint_dir))) {
    if (Result<std::optional<RunRecord>> run = source.RunFor(ns, query.checkpoint_dir);
        run.ok() && *run) {
      if (!history) history = TuningHistory{};
      history->runs[query.checkpoint_dir] = **run;
    }
  }
  return history;
}

}  // namespace graintune::webhook::planner
