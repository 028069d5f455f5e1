// The webhook's sources backed by the API server's watched caches (kube/informer.h): Nodes for
// host shapes, ConfigMaps for mounted MaxText YAML. Reads never touch the network on the
// admission path; an unsynced cache is "could not tell" (an error Result: the caller fails
// open), except for shapes, which fall back to the machine-type table like a node pool scaled
// to zero does.
#pragma once

#include <memory>

#include "kube/informer.h"
#include "webhook/node_shapes.h"
#include "webhook/sources.h"

namespace graintune::webhook {

class NodeCacheShapes : public NodeShapeSource {
 public:
  explicit NodeCacheShapes(std::shared_ptr<kube::Informer> nodes) : nodes_(std::move(nodes)) {}
  Result<HostShape> ShapeFor(const NodeSelection& selection) override;

 private:
  std::shared_ptr<kube::Informer> nodes_;
  MachineTypeTableShapes table_;
};

class ConfigMapCache : public ConfigMapSource {
 public:
  explicit ConfigMapCache(std::shared_ptr<kube::Informer> configmaps)
      : configmaps_(std::move(configmaps)) {}
  Result<std::optional<std::string>> Get(const std::string& ns, const std::string& name,
                                         const std::string& key) override;

 private:
  std::shared_ptr<kube::Informer> configmaps_;
};

}  // namespace graintune::webhook
