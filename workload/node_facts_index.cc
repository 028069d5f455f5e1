#include "workload/node_facts_index.h"

namespace graintune::workload {
namespace {

std::string NameOf(const nlohmann::json& node) {
  if (!node.is_object()) return "";
  auto meta = node.find("metadata");
  if (meta == node.end() || !meta->is_object()) return "";
  auto name = meta->find("name");
  return name != meta->end() && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace

kube::InformerHandlers NodeFactsIndex::HandlersFor(std::shared_ptr<NodeFactsIndex> index) {
  return {.on_add = [index](const nlohmann::json& node) { index->Put(node); },
          .on_update = [index](const nlohmann::json&, const nlohmann::json& node) { index->Put(node); },
          .on_delete = [index](const nlohmann::json& node) { index->Remove(node); }};
}

void NodeFactsIndex::Put(const nlohmann::json& node) {
  // Parsed outside the lock: readers never wait for a parse.
  Result<NodeFacts> facts = NodeFactsFromJson(node);
  if (!facts.ok()) return Remove(node);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = by_name_.try_emplace(facts->name, *facts);
  if (!inserted) {
    if (it->second == *facts) return;  // a heartbeat: no fact changed
    it->second = std::move(*facts);
  }
  snapshot_.reset();
}

void NodeFactsIndex::Remove(const nlohmann::json& node) {
  const std::string name = NameOf(node);
  std::lock_guard<std::mutex> lock(mu_);
  if (by_name_.erase(name) > 0) snapshot_.reset();
}

std::shared_ptr<const std::vector<NodeFacts>> NodeFactsIndex::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!snapshot_) {
    auto facts = std::make_shared<std::vector<NodeFacts>>();
    facts->reserve(by_name_.size());
    for (const auto& [name, f] : by_name_) facts->push_back(f);
    snapshot_ = std::move(facts);
    ++snapshots_built_;
  }
  return snapshot_;
}

int NodeFactsIndex::SnapshotsBuiltForTest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_built_;
}

}  // namespace graintune::workload
