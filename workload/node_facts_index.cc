#include "workload/node_facts_index.h"

#include <vector>

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
  Result<NodeFacts> facts = NodeFactsFromJson(node);  // outside the lock
  if (!facts.ok()) return Remove(node);
  auto fresh = std::make_shared<const NodeFacts>(std::move(*facts));
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const NodeFacts>& held = by_name_[fresh->name];
  if (held && *held == *fresh) return;  // a heartbeat: no fact changed
  held = std::move(fresh);
  ++generation_;
}

void NodeFactsIndex::Remove(const nlohmann::json& node) {
  const std::string name = NameOf(node);
  std::lock_guard<std::mutex> lock(mu_);
  if (by_name_.erase(name) > 0) ++generation_;
}

std::shared_ptr<const std::vector<NodeFacts>> NodeFactsIndex::Snapshot() {
  std::vector<std::shared_ptr<const NodeFacts>> held;
  long generation = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (snapshot_ && (snapshot_generation_ == generation_ || building_)) return snapshot_;
    generation = generation_;
    held.reserve(by_name_.size());
    for (const auto& [name, facts] : by_name_) held.push_back(facts);
    building_ = true;
  }
  std::shared_ptr<std::vector<NodeFacts>> built;
  try {
    built = std::make_shared<std::vector<NodeFacts>>();
    built->reserve(held.size());
    for (const auto& facts : held) built->push_back(*facts);
  } catch (...) {
    // Out of memory: the next reader tries again; the flag must not stay set.
    std::lock_guard<std::mutex> lock(mu_);
    building_ = false;
    throw;
  }
  std::lock_guard<std::mutex> lock(mu_);
  building_ = false;
  ++snapshots_built_;
  if (generation > snapshot_generation_) {
    snapshot_ = std::move(built);
    snapshot_generation_ = generation;
  }
  return snapshot_;
}

int NodeFactsIndex::SnapshotsBuiltForTest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_built_;
}

}  // namespace graintune::workload
