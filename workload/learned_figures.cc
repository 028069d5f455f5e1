#include "workload/learned_figures.h"

#include <cmath>

#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

const json& Metadata(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

std::string StringField(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// A positive, finite figure, else nullopt.
std::optional<double> Figure(const std::optional<double>& v) {
  if (!v || !(*v > 0) || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string DecidedAt(const GrainTuningStatus& status) {
  return status.recommendation ? status.recommendation->decided_at.value_or("") : "";
}

bool InReach(const json& gt, const LearningReach& reach) {
  return reach.Includes(StringField(Metadata(gt), "namespace"));
}

// The profile a GrainTuning that matched teaches: its kind's defaults with the learned rate and
// the worker memory measured (status.learned's over the trials').
std::optional<LearnedDatasetProfile> ProfileOf(const json& gt, double rate, const std::string& machine_type) {
  const GrainTuningSpec spec = SpecOf(gt);
  Result<DatasetKind> kind = ParseDatasetKind(spec.dataset_kind.value_or("raw-text"));
  if (!kind.ok()) return std::nullopt;
  LearnedDatasetProfile learned{DefaultProfile(*kind), GrainTuningRef(gt)};
  DatasetProfile& p = learned.profile;
  p.tokens_per_second_per_worker = rate;
  const GrainTuningStatus status = StatusOf(gt);
  for (const TrialStatus& t : status.trials)
    if (std::optional<double> memory = Figure(t.worker_memory_bytes)) p.worker_memory_bytes = *memory;
  if (status.learned)
    if (std::optional<double> memory = Figure(status.learned->worker_memory_bytes)) p.worker_memory_bytes = *memory;
  p.rate_known = true;
  p.source = "learned by GrainTuning " + learned.grain_tuning + (machine_type.empty() ? "" : " on " + machine_type);
  return learned;
}

}  // namespace

std::string GrainTuningRef(const json& grain_tuning) {
  const json& meta = Metadata(grain_tuning);
  return StringField(meta, "namespace") + "/" + StringField(meta, "name");
}

std::optional<LearnedDatasetProfile> NewestLearnedProfile(const GrainTuningVisitor& visit,
                                                          const LearningReach& reach,
                                                          const std::string& dataset,
                                                          const std::string& machine_type) {
  // Every GrainTuning is read without its lists; only the newest match is copied, and turned
  // into a profile afterwards.
  std::optional<json> newest_match;
  std::string newest;
  double newest_rate = 0;
  visit([&](const json& gt) {
    if (!InReach(gt, reach)) return;
    const GrainTuningSpec spec = SpecOf(gt);
    if (spec.dataset != dataset) return;
    if (spec.dataset_kind && !ParseDatasetKind(*spec.dataset_kind).ok()) return;
    const GrainTuningStatus status = StatusWithoutListsOf(gt);
    if ((status.learned ? status.learned->machine_type.value_or("") : "") != machine_type) return;
    std::optional<double> rate = Figure(status.learned_tokens_per_second_per_worker);
    if (!rate) return;
    const std::string when = DecidedAt(status);
    if (newest_match && when < newest) return;
    newest_match = gt;
    newest = when;
    newest_rate = *rate;
  });
  if (!newest_match) return std::nullopt;
  return ProfileOf(*newest_match, newest_rate, machine_type);
}

std::optional<LearnedDemand> NewestLearnedDemand(const GrainTuningVisitor& visit,
                                                 const LearningReach& reach, const std::string& key) {
  if (key.empty()) return std::nullopt;
  std::optional<LearnedDemand> newest_match;
  std::string newest;
  visit([&](const json& gt) {
    if (!InReach(gt, reach)) return;
    const GrainTuningStatus status = StatusWithoutListsOf(gt);
    if (!status.learned || status.learned->demand_key != key) return;
    std::optional<double> fed = Figure(status.learned->fed_tokens_per_second_per_host);
    if (!fed) return;
    const std::string when = DecidedAt(status);
    if (newest_match && when < newest) return;
    newest_match = LearnedDemand{.tokens_per_second_per_host = *fed, .grain_tuning = GrainTuningRef(gt)};
    newest = when;
  });
  return newest_match;
}

}  // namespace graintune::workload
