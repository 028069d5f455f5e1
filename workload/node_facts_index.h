// The facts of every Node (NodeFacts: labels, allocatable cpu, memory and chips,
// unschedulable), kept current by the Node informer's events instead of re-read from its cache.
// At thousands of hosts the Nodes change several times a second (status heartbeats); each event
// costs one Node's parse here, a heartbeat that changes no fact changes nothing, and readers
// share one immutable snapshot that is rebuilt only after a fact really changed. (Re-reading the
// whole cache on every change put a parse of every Node in front of admissions.)
//
// Thread-safety: one writer at a time calls Put/Remove (the informer's thread, through
// HandlersFor); Snapshot() may be called from any thread meanwhile. The lock is held only to
// swap one Node's facts or copy pointers, never for a parse or a snapshot's build; while one
// reader builds a snapshot, others get the last one built (behind by the changes since, e.g.
// during a relist); the next reader after the build sees them.
// A relist (410 Gone) replays adds, updates and deletes one by one, so a reader may see it half
// applied, as it would see the same changes arriving by watch.
// A Node whose facts do not read (no allocatable cpu or memory, a field of the wrong type) is
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

  // Every readable Node's facts, in name order. The same shared snapshot while nothing changed.
  std::shared_ptr<const std::vector<NodeFacts>> Snapshot();

  // What the handlers do (an add or update puts, a delete removes); tests call them directly.
  void Put(const nlohmann::json& node);
  void Remove(const nlohmann::json& node);

  // How many snapshots were built; a heartbeat that changed no fact builds none.
  int SnapshotsBuiltForTest() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const NodeFacts>> by_name_;
  long generation_ = 0;  // bumped by every change of a fact
  std::shared_ptr<const std::vector<NodeFacts>> snapshot_;
  long snapshot_generation_ = -1;
  bool building_ = false;
  int snapshots_built_ = 0;
};

}  // namespace graintune::workload
