#include "workload/cluster_sources.h"

#include <cmath>

#include "workload/learned_figures.h"

namespace graintune::workload {

TpuNodeCache MakeTpuNodeCache(std::shared_ptr<kube::Client> client) {
  TpuNodeCache cache;
  cache.facts = std::make_shared<NodeFactsIndex>();
  cache.informer = std::make_shared<kube::Informer>(
      std::move(client), kube::resources::kNodes,
      kube::InformerOptions{.transform = KeepOnlyNodeFacts},
      NodeFactsIndex::HandlersFor(cache.facts));
  return cache;
}

Result<HostShape> NodeCacheShapes::ShapeFor(const NodeSelection& selection) {
  std::string why_table = "no Node matches the pod's node selection";
  if (nodes_.informer->Synced()) {
    if (std::optional<HostShape> shape = ShapeFromNodes(*nodes_.facts->Snapshot(), selection)) return *shape;
  } else {
    why_table = "the Node cache is not synced yet";
  }
  Result<HostShape> table = table_.ShapeFor(selection);
  if (!table.ok()) return Status::Error(table.error() + " (" + why_table + ")");
  HostShape shape = *table;
  shape.source = table->source + "; " + why_table;
  return shape;
}

ConfigMapFetcher::Fetch FetchConfigMapData(std::shared_ptr<kube::Client> client) {
  return [client = std::move(client)](const std::string& ns, const std::string& name)
             -> Result<std::optional<kube::Json>> {
    kube::ApiResult<kube::Json> cm = client->Get(kube::resources::kConfigMaps, ns, name);
    if (!cm.ok()) {
      if (cm.error().IsNotFound()) return std::optional<kube::Json>();
      return Status::Error("ConfigMap " + ns + "/" + name + ": " + cm.status().message());
    }
    return std::optional<kube::Json>(cm->value("data", kube::Json::object()));
  };
}

Result<std::optional<TuningHistory>> GrainTuningHistory::Lookup(const std::string& ns,
                                                                const std::string& tuning_key) {
  if (!graintunings_->Synced()) return Status::Error("the GrainTuning cache is not synced yet");
  std::optional<kube::Json> gt = graintunings_->Get(ns, GrainTuningName(tuning_key));
  if (!gt) return std::optional<TuningHistory>();
  return std::optional<TuningHistory>(HistoryFromGrainTuning(*gt));
}

Result<std::optional<RunRecord>> GrainTuningHistory::RunFor(const std::string& ns,
                                                           const std::string& checkpoint_dir) {
  if (!graintunings_->Synced()) return Status::Error("the GrainTuning cache is not synced yet");
  std::optional<RunRecord> found;
  graintunings_->Visit([&](const kube::Json& gt) {
    if (found || !gt.is_object()) return;
    const kube::Json& meta = gt.contains("metadata") ? gt["metadata"] : kube::Json();
    if (!meta.is_object() || meta.value("namespace", "") != ns) return;
    if (std::optional<RunRecord> run = RunOf(gt, checkpoint_dir)) found = run;
  });
  return found;
}

std::optional<LearnedDatasetProfile> GrainTuningHistory::LearnedProfile(const LearningReach& reach,
                                                                        const std::string& dataset,
                                                                        const std::string& machine_type) {
  return NewestLearnedProfile(Visitor(), reach, dataset, machine_type);
}

std::optional<LearnedDemand> GrainTuningHistory::LearnedDemandFor(const LearningReach& reach,
                                                                 const std::string& key) {
  return NewestLearnedDemand(Visitor(), reach, key);
}

GrainTuningVisitor GrainTuningHistory::Visitor() const {
  return [informer = graintunings_](const std::function<void(const kube::Json&)>& visit) {
    informer->Visit(visit);
  };
}

std::optional<int> JobCache::FailedPods(const std::string& ns, const std::string& job) {
  std::optional<kube::Json> j = jobs_->Get(ns, job);
  if (!j) return std::nullopt;
  return j->value("status", kube::Json::object()).value("failed", 0);
}

Policy PolicyCache::PolicyFor(const std::string& ns,
                              const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> ns_labels = {{"kubernetes.io/metadata.name", ns}};
  if (std::optional<kube::Json> n = namespaces_->Get("", ns)) {
    const kube::Json l = n->value("metadata", kube::Json::object()).value("labels", kube::Json::object());
    for (const auto& [k, v] : l.items())
      if (v.is_string()) ns_labels[k] = v.get<std::string>();
  }
  std::vector<kube::Json> usable;
  for (const kube::Json& p : policies_->List())
    if (PolicyFromObject(p).ok()) usable.push_back(p);
  if (std::optional<kube::Json> chosen = PolicyCovering(usable, ns_labels, labels))
    return *PolicyFromObject(*chosen);
  return Policy{};
}

}  // namespace graintune::workload
