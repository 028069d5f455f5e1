// graintune's own API objects (crds/) to and from plain values: GrainTunePolicy specs into a
// tuner Policy, GrainTuning status into the webhook's TuningHistory and the operator's trials,
// trials back into status JSON, label selectors, and the GrainTuning name for a tuning key.
// Pure functions; no I/O.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/policy.h"
#include "tuner/trial.h"
#include "workload/sources.h"

namespace graintune::workload {

// A Kubernetes LabelSelector (matchLabels, matchExpressions) against labels; an empty or absent
// selector matches everything. Unknown operators match nothing.
bool SelectorMatches(const nlohmann::json& selector,
                     const std::map<std::string, std::string>& labels);

// A GrainTunePolicy object into a Policy; error naming the field when a value is unusable.
Result<Policy> PolicyFromObject(const nlohmann::json& policy);

// Among GrainTunePolicy objects, the one covering a workload in a namespace with these labels:
// highest spec.priority, ties to the first name. nullopt when none covers it.
std::optional<nlohmann::json> PolicyCovering(const std::vector<nlohmann::json>& policies,
                                             const std::map<std::string, std::string>& namespace_labels,
                                             const std::map<std::string, std::string>& workload_labels);

// A trial as status.trials stores it (grain_tuning_status.h).
nlohmann::json TrialToJson(const Trial& trial);

// status.trials of a GrainTuning, oldest first (empty when none).
std::vector<Trial> TrialsOf(const nlohmann::json& grain_tuning);

// What the webhook needs from a GrainTuning: trials, the recommendation and its attempt, mode,
// the runs that keep their value (status.runs) and the next run's value (status.nextRun).
TuningHistory HistoryFromGrainTuning(const nlohmann::json& grain_tuning);

// status.runs by checkpoint directory (workload::RunRecordsOf: entries without a directory or
// a positive worker count are skipped).
std::map<std::string, RunRecord> RunsOf(const nlohmann::json& grain_tuning);
// The run recorded for `checkpoint_dir`.
std::optional<RunRecord> RunOf(const nlohmann::json& grain_tuning, const std::string& checkpoint_dir);

// GrainTunePolicies from a file, for the standalone webhook (--policy-file): every policy must
// parse, or the file is refused with the reason. Namespace labels are not known there; a
// namespaceSelector sees only kubernetes.io/metadata.name.
class StaticPolicies : public PolicySource {
 public:
  static Result<StaticPolicies> FromObjects(std::vector<nlohmann::json> objects);
  Policy PolicyFor(const std::string& ns, const std::map<std::string, std::string>& labels) override;
  size_t size() const { return policies_.size(); }

 private:
  std::vector<nlohmann::json> policies_;
};

// A DNS-1123 subdomain name for a tuning key: the key itself when it is one, else a cleaned
// form with a short hash so different keys never share a name.
std::string GrainTuningName(const std::string& tuning_key);

}  // namespace graintune::workload
