#include "workload/cluster_sources.h"

#include <cmath>

#include "workload/grain_tuning_status.h"

namespace graintune::workload {

TpuNodeCache MakeTpuNodeCache(std::shared_ptr<kube::Client> client) {
  TpuNodeCache cache;
  cache.facts = std::make_shared<NodeFactsIndex>();
  cache.informer = std::make_shared<kube::Informer>(
      std::move(client), kube::resources::kNodes,
      kube::InformerOptions{.label_selector = "cloud.google.com/gke-tpu-accelerator",
                            .transform = KeepOnlyNodeFacts},
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

std::optional<DatasetProfile> GrainTuningHistory::LearnedProfile(const std::string& dataset,
                                                                 const std::string& machine_type) {
  // Per admission, over every GrainTuning in the cluster: read without its lists, and only the
  // newest match (by its recommendation's decidedAt) is turned into a profile afterwards.
  std::optional<kube::Json> newest_match;
  std::string newest;
  double newest_rate = 0;
  graintunings_->Visit([&](const kube::Json& gt) {
    const GrainTuningSpec spec = SpecOf(gt);
    if (spec.dataset != dataset) return;
    if (spec.dataset_kind && !ParseDatasetKind(*spec.dataset_kind).ok()) return;
    const GrainTuningStatus status = StatusWithoutListsOf(gt);
    const std::string on = status.learned ? status.learned->machine_type.value_or("") : "";
    if (on != machine_type) return;
    const double rate = status.learned_tokens_per_second_per_worker.value_or(0);
    if (rate <= 0) return;
    const std::string when = status.recommendation ? status.recommendation->decided_at.value_or("") : "";
    if (newest_match && when < newest) return;
    newest_match = gt;
    newest = when;
    newest_rate = rate;
  });
  if (!newest_match) return std::nullopt;
  const kube::Json& gt = *newest_match;
  Result<DatasetKind> kind = ParseDatasetKind(SpecOf(gt).dataset_kind.value_or("raw-text"));
  if (!kind.ok()) return std::nullopt;  // checked above
  DatasetProfile p = DefaultProfile(*kind);
  p.tokens_per_second_per_worker = newest_rate;
  const GrainTuningStatus status = StatusOf(gt);
  for (const TrialStatus& t : status.trials)
    if (t.worker_memory_bytes.value_or(0) > 0) p.worker_memory_bytes = *t.worker_memory_bytes;
  if (status.learned && status.learned->worker_memory_bytes.value_or(0) > 0)
    p.worker_memory_bytes = *status.learned->worker_memory_bytes;
  p.rate_known = true;
  const kube::Json meta = gt.value("metadata", kube::Json::object());
  p.source = "learned by GrainTuning " + meta.value("namespace", "") + "/" + meta.value("name", "") +
             (machine_type.empty() ? "" : " on " + machine_type);
  return p;
}

std::optional<LearnedDemand> GrainTuningHistory::LearnedDemandFor(const std::string& key) {
  if (key.empty()) return std::nullopt;
  std::optional<LearnedDemand> newest_match;
  std::string newest;
  graintunings_->Visit([&](const kube::Json& gt) {
    if (!gt.is_object()) return;
    const GrainTuningStatus status = StatusWithoutListsOf(gt);
    if (!status.learned || status.learned->demand_key != key) return;
    const double fed = status.learned->fed_tokens_per_second_per_host.value_or(0);
    if (!(fed > 0) || !std::isfinite(fed)) return;
    const std::string when = status.recommendation ? status.recommendation->decided_at.value_or("") : "";
    if (newest_match && when < newest) return;
    const kube::Json meta = gt.value("metadata", kube::Json::object());
    newest_match = LearnedDemand{
        .tokens_per_second_per_host = fed,
        .source = "GrainTuning " + (meta.is_object() ? meta.value("namespace", "") + "/" + meta.value("name", "") : "")};
    newest = when;
  });
  return newest_match;
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
