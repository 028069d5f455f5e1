#include "workload/identity.h"

#include <optional>
#include <utility>
#include <vector>

#include "base/numbers.h"
#include "workload/workload_annotations.h"

namespace graintune::workload {

using json = nlohmann::json;

const json& MetadataOf(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find("metadata");
  return it != object.end() ? *it : kEmpty;
}

std::string MetadataString(const json& object, const std::string& field) {
  const json& meta = MetadataOf(object);
  if (!meta.is_object()) return "";
  auto it = meta.find(field);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

int AttemptOf(const json& metadata) {
  int attempt = 0;
  for (const auto& [field, key] : {std::pair{"labels", kRestartAttemptLabel},
                                   std::pair{"annotations", kAttemptAnnotation}}) {
    if (const std::string* value = StringEntry(metadata, field, key))
      if (const std::optional<int> v = ParseInt(*value); v && *v > attempt) attempt = *v;
  }
  return attempt;
}

std::string TuningKeyOf(const json& object, WorkloadKind kind) {
  const json& meta = MetadataOf(object);
  if (const std::string* key = StringEntry(meta, "annotations", kTuningKeyAnnotation)) return *key;
  // A JobSet is its own key; a Job learns under its JobSet; a Pod under its JobSet or Job.
  std::vector<std::string> owners;
  if (kind == WorkloadKind::kJob) owners = {"jobset.sigs.k8s.io/jobset-name"};
  if (kind == WorkloadKind::kPod)
    owners = {"jobset.sigs.k8s.io/jobset-name", "batch.kubernetes.io/job-name", "job-name"};
  for (const std::string& owner : owners) {
    if (const std::string* name = StringEntry(meta, "labels", owner)) return *name;
  }
  std::string name = MetadataString(object, "name");
  if (name.empty()) name = MetadataString(object, "generateName");
  return name;
}

}  // namespace graintune::workload
