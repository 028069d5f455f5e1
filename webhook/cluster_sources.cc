#include "webhook/cluster_sources.h"

namespace graintune::webhook {

Result<HostShape> NodeCacheShapes::ShapeFor(const NodeSelection& selection) {
  std::string why_table = "no Node matches the pod's node selection";
  if (nodes_->Synced()) {
    std::vector<NodeFacts> facts;
    for (const kube::Json& node : nodes_->List())
      if (Result<NodeFacts> f = NodeFactsFromJson(node); f.ok()) facts.push_back(*f);
    if (std::optional<HostShape> shape = ShapeFromNodes(facts, selection)) return *shape;
  } else {
    why_table = "the Node cache is not synced yet";
  }
  Result<HostShape> table = table_.ShapeFor(selection);
  if (!table.ok()) return Status::Error(table.error() + " (" + why_table + ")");
  HostShape shape = *table;
  shape.source = table->source + "; " + why_table;
  return shape;
}

Result<std::optional<std::string>> ConfigMapCache::Get(const std::string& ns,
                                                       const std::string& name,
                                                       const std::string& key) {
  if (!configmaps_->Synced()) return Status::Error("the ConfigMap cache is not synced yet");
  std::optional<kube::Json> cm = configmaps_->Get(ns, name);
  if (!cm) return std::optional<std::string>();
  const kube::Json data = cm->value("data", kube::Json::object());
  auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return std::optional<std::string>();
  return std::optional<std::string>(it->get<std::string>());
}

}  // namespace graintune::webhook
