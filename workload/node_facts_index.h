// The facts of every TPU Node (NodeFacts: labels, allocatable cpu, memory and chips,
// unschedulable), kept current by the Node informer's events instead of re-read from its cache.
// At thousands of hosts the Nodes change several times a second (status heartbeats); each event
// costs one Node's parse here, a heartbeat that changes no fact changes nothing, and readers
// share one immutable snapshot that is rebuilt only after a fact really changed. Re-reading the
// whole cache on every change instead put a parse of every Node in front of admissions.
//
// Thread-safety: Handlers() run on the informer's thread; Snapshot() may be called from any
// thread at the same time. A Node whose facts do not parse (no allocatable cpu or memory) is
// left out, as if absent, until an event brings a readable copy.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kube/informer.h"
#include "workload/node_shapes.h"

namespace graintune::workload {

class NodeFactsIndex {
 public:
  // Handlers for the Node informer (kube::Informer's constructor); they hold the index, so it
  // lives as long as the informer does.
  static kube::InformerHandlers HandlersFor(std::shared_ptr<NodeFactsIndex> index);

  // Every readable Node's facts, by name order. Cheap when nothing changed since the last call
  // (the same snapshot is shared); O(Nodes) once after a change.
  std::shared_ptr<const std::vector<NodeFacts>> Snapshot();

  // What the handlers do, callable directly (tests, a relist).
  void Put(const nlohmann::json& node);
  void Remove(const nlohmann::json& node);

  // How many snapshots were built; a heartbeat that changed no fact builds none.
  int SnapshotsBuiltForTest() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, NodeFacts> by_name_;
  std::shared_ptr<const std::vector<NodeFacts>> snapshot_;  // null: stale
  int snapshots_built_ = 0;
};

}  // namespace graintune::workload
