#include "workload/cluster_sources.h"

#include <cmath>

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

std::optional<DatasetProfile> GrainTuningHistory::LearnedProfile(const std::string& dataset,
                                                                 const std::string& machine_type) {
  // Per admission, over every GrainTuning in the cluster: read in place, and only the newest
  // match (by its recommendation's decidedAt) is turned into a profile afterwards.
  static const kube::Json kEmpty = kube::Json::object();
  auto field = [](const kube::Json& object, const char* name) -> const kube::Json& {
    if (!object.is_object()) return kEmpty;
    auto it = object.find(name);
    return it != object.end() && it->is_object() ? *it : kEmpty;
  };
  std::optional<kube::Json> newest_match;
  std::string newest;
  double newest_rate = 0;
  graintunings_->Visit([&](const kube::Json& gt) {
    const kube::Json& spec = field(gt, "spec");
    const kube::Json& status = field(gt, "status");
    auto named = spec.find("dataset");
    if (named == spec.end() || !named->is_string() || named->get_ref<const std::string&>() != dataset) return;
    const kube::Json& learned = field(status, "learned");
    auto measured_on = learned.find("machineType");
    const std::string on = measured_on != learned.end() && measured_on->is_string()
                               ? measured_on->get<std::string>() : "";
    if (on != machine_type) return;
    auto rate = status.find("learnedTokensPerSecondPerWorker");
    if (rate == status.end() || !rate->is_number() || rate->get<double>() <= 0) return;
    auto kind = spec.find("datasetKind");
    if (kind != spec.end() && (!kind->is_string() || !ParseDatasetKind(kind->get<std::string>()).ok())) return;
    auto decided = field(status, "recommendation").find("decidedAt");
    const std::string when = decided != field(status, "recommendation").end() && decided->is_string()
                                 ? decided->get<std::string>() : "";
    if (newest_match && when < newest) return;
    newest_match = gt;
    newest = when;
    newest_rate = rate->get<double>();
  });
  if (!newest_match) return std::nullopt;
  const kube::Json& gt = *newest_match;
  auto kind_of = field(gt, "spec").find("datasetKind");
  Result<DatasetKind> kind =
      ParseDatasetKind(kind_of != field(gt, "spec").end() ? kind_of->get<std::string>() : "raw-text");
  if (!kind.ok()) return std::nullopt;  // checked above
  DatasetProfile p = DefaultProfile(*kind);
  p.tokens_per_second_per_worker = newest_rate;
  for (const Trial& t : TrialsOf(gt))
    if (t.worker_memory_bytes > 0) p.worker_memory_bytes = t.worker_memory_bytes;
  auto memory = field(field(gt, "status"), "learned").find("workerMemoryBytes");
  if (memory != field(field(gt, "status"), "learned").end() && memory->is_number() && memory->get<double>() > 0)
    p.worker_memory_bytes = memory->get<double>();
  p.rate_known = true;
  p.source = "learned by GrainTuning " + field(gt, "metadata").value("namespace", "") + "/" +
             field(gt, "metadata").value("name", "") +
             (machine_type.empty() ? "" : " on " + machine_type);
  return p;
}

std::optional<LearnedDemand> GrainTuningHistory::LearnedDemandFor(const std::string& key) {
  if (key.empty()) return std::nullopt;
  std::optional<LearnedDemand> newest_match;
  std::string newest;
  graintunings_->Visit([&](const kube::Json& gt) {
    if (!gt.is_object()) return;
    const kube::Json* status = gt.contains("status") && gt["status"].is_object() ? &gt["status"] : nullptr;
    if (!status || !status->contains("learned") || !(*status)["learned"].is_object()) return;
    const kube::Json& learned = (*status)["learned"];
    auto demand_key = learned.find("demandKey");
    if (demand_key == learned.end() || !demand_key->is_string() ||
        demand_key->get_ref<const std::string&>() != key)
      return;
    auto fed = learned.find("fedTokensPerSecondPerHost");
    if (fed == learned.end() || !fed->is_number() || !(fed->get<double>() > 0) ||
        !std::isfinite(fed->get<double>()))
      return;
    std::string when;
    if (auto rec = status->find("recommendation"); rec != status->end() && rec->is_object())
      if (auto at = rec->find("decidedAt"); at != rec->end() && at->is_string()) when = at->get<std::string>();
    if (newest_match && when < newest) return;
    const kube::Json meta = gt.value("metadata", kube::Json::object());
    newest_match = LearnedDemand{
        .tokens_per_second_per_host = fed->get<double>(),
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
