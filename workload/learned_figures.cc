#include "workload/learned_figures.h"

#include <cmath>

#include "workload/graintune_objects.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

const json& Field(const json& object, const char* name) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(name);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

std::string StringField(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// A positive, finite number at object[name].
std::optional<double> Figure(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string DecidedAt(const json& gt) {
  return StringField(Field(Field(gt, "status"), "recommendation"), "decidedAt");
}

bool InReach(const json& gt, const LearningReach& reach) {
  return reach.Includes(StringField(Field(gt, "metadata"), "namespace"));
}

// The profile a GrainTuning that matched teaches: its kind's defaults with the learned rate and
// the worker memory measured (status.learned's over the trials').
std::optional<LearnedDatasetProfile> ProfileOf(const json& gt, double rate, const std::string& machine_type) {
  const json& spec = Field(gt, "spec");
  Result<DatasetKind> kind = ParseDatasetKind(spec.contains("datasetKind") ? StringField(spec, "datasetKind") : "raw-text");
  if (!kind.ok()) return std::nullopt;
  LearnedDatasetProfile learned{DefaultProfile(*kind), GrainTuningRef(gt)};
  DatasetProfile& p = learned.profile;
  p.tokens_per_second_per_worker = rate;
  for (const Trial& t : TrialsOf(gt))
    if (t.worker_memory_bytes > 0) p.worker_memory_bytes = t.worker_memory_bytes;
  if (std::optional<double> memory = Figure(Field(Field(gt, "status"), "learned"), "workerMemoryBytes"))
    p.worker_memory_bytes = *memory;
  p.rate_known = true;
  p.source = "learned by GrainTuning " + learned.grain_tuning + (machine_type.empty() ? "" : " on " + machine_type);
  return learned;
}

}  // namespace

std::string GrainTuningRef(const json& grain_tuning) {
  const json& meta = Field(grain_tuning, "metadata");
  return StringField(meta, "namespace") + "/" + StringField(meta, "name");
}

std::optional<LearnedDatasetProfile> NewestLearnedProfile(const GrainTuningVisitor& visit,
                                                          const LearningReach& reach,
                                                          const std::string& dataset,
                                                          const std::string& machine_type) {
  // Read in place; only the newest match is copied, and turned into a profile afterwards.
  std::optional<json> newest_match;
  std::string newest;
  double newest_rate = 0;
  visit([&](const json& gt) {
    const json& spec = Field(gt, "spec");
    const json& status = Field(gt, "status");
    if (!spec.contains("dataset") || StringField(spec, "dataset") != dataset) return;
    if (StringField(Field(status, "learned"), "machineType") != machine_type) return;
    std::optional<double> rate = Figure(status, "learnedTokensPerSecondPerWorker");
    if (!rate) return;
    if (auto kind = spec.find("datasetKind");
        kind != spec.end() && (!kind->is_string() || !ParseDatasetKind(kind->get<std::string>()).ok()))
      return;
    if (!InReach(gt, reach)) return;
    const std::string when = DecidedAt(gt);
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
    auto status = gt.is_object() ? gt.find("status") : gt.end();
    if (!gt.is_object() || status == gt.end() || !status->is_object()) return;
    auto learned = status->find("learned");
    if (learned == status->end() || !learned->is_object()) return;
    if (!learned->contains("demandKey") || StringField(*learned, "demandKey") != key) return;
    std::optional<double> fed = Figure(*learned, "fedTokensPerSecondPerHost");
    if (!fed || !InReach(gt, reach)) return;
    const std::string when = DecidedAt(gt);
    if (newest_match && when < newest) return;
    newest_match = LearnedDemand{.tokens_per_second_per_host = *fed, .grain_tuning = GrainTuningRef(gt)};
    newest = when;
  });
  return newest_match;
}

}  // namespace graintune::workload
