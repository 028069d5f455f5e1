// Host shapes from real Nodes: which Nodes a pod could land on (its nodeSelector and required
// node affinity), and the shape to plan for. Pure functions over plain values; the Node cache
// that feeds them lives in cluster_sources.h.
//
// When several Nodes match, the smallest allocatable cpu and memory among them is used: every
// pod of an attempt gets one value (DESIGN.md), so it must fit the tightest host.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/host_shape.h"
#include "base/status.h"
#include "workload/sources.h"

namespace graintune::workload {

struct NodeFacts {
  std::string name;
  std::map<std::string, std::string> labels;
  double allocatable_cpu = 0;
  double allocatable_memory_bytes = 0;
  int tpu_chips = 0;  // allocatable google.com/tpu
  bool unschedulable = false;

  bool operator==(const NodeFacts&) const = default;
};

// Reads a Node object; error when its allocatable cpu or memory is missing or malformed. Never
// throws: a field of the wrong type reads as absent.
Result<NodeFacts> NodeFactsFromJson(const nlohmann::json& node);

// Reduces a Node to what NodeFactsFromJson reads (metadata's name, uid, resourceVersion and
// labels; spec.unschedulable; status.allocatable), in place: an informer's transform for the
// Node cache. It keeps resourceVersion, so a relist tells a changed Node from an unchanged one.
// A TPU node's status (conditions, images, nodeInfo) and managedFields are most of
// its size, and every heartbeat would otherwise be copied and kept.
void KeepOnlyNodeFacts(nlohmann::json& node);

// True when the labels satisfy the nodeSelector and at least one required term (if any).
bool NodeMatches(const std::map<std::string, std::string>& labels, const NodeSelection& selection);

// The shape for a selection from the nodes that match it (schedulable; with TPU chips for a
// selection of a TPU host, without any for a CPU host, SelectsTpuHost); nullopt when none does.
std::optional<HostShape> ShapeFromNodes(const std::vector<NodeFacts>& nodes,
                                        const NodeSelection& selection);

}  // namespace graintune::workload
