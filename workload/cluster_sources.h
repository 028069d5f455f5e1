// The webhook's sources backed by the API server's watched caches (kube/informer.h): Nodes for
// host shapes, ConfigMaps for mounted MaxText YAML. Reads never touch the network on the
// admission path; an unsynced cache is "could not tell" (an error Result: the caller fails
// open), except for shapes, which fall back to the machine-type table like a node pool scaled
// to zero does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kube/informer.h"
#include "workload/graintune_objects.h"
#include "workload/configmap_fetcher.h"
#include "workload/learned_figures.h"
#include "workload/node_facts_index.h"
#include "workload/node_shapes.h"
#include "workload/sources.h"

namespace graintune::workload {

// The Node informer (every Node: TPU hosts, and the CPU hosts a Pathways head trains on; each
// Node reduced to what a host shape reads, KeepOnlyNodeFacts, a few hundred bytes) and the facts
// its events keep, made together so the two cannot disagree. Not started: start `informer` with
// the other caches.
struct TpuNodeCache {
  std::shared_ptr<kube::Informer> informer;
  std::shared_ptr<NodeFactsIndex> facts;
};
TpuNodeCache MakeTpuNodeCache(std::shared_ptr<kube::Client> client);

// Shapes from the TPU Nodes' facts once the informer's first list is in; the machine-type table
// before that, and for selections no Node matches (a node pool scaled to zero).
class NodeCacheShapes : public NodeShapeSource {
 public:
  explicit NodeCacheShapes(TpuNodeCache nodes) : nodes_(std::move(nodes)) {}
  Result<HostShape> ShapeFor(const NodeSelection& selection) override;

 private:
  TpuNodeCache nodes_;
  MachineTypeTableShapes table_;
};

// What ConfigMapFetcher (configmap_fetcher.h) fetches with: a GET of one ConfigMap by name
// through `client` (give it a short request timeout: an admission waits for it). Its `data`,
// nullopt when the ConfigMap does not exist, an error otherwise.
ConfigMapFetcher::Fetch FetchConfigMapData(std::shared_ptr<kube::Client> client);

// History from the GrainTuning cache (the operator writes it; the webhook only reads).
class GrainTuningHistory : public HistorySource {
 public:
  explicit GrainTuningHistory(std::shared_ptr<kube::Informer> graintunings)
      : graintunings_(std::move(graintunings)) {}
  Result<std::optional<TuningHistory>> Lookup(const std::string& ns,
                                              const std::string& tuning_key) override;
  // Learned figures (learned_figures.h) among the cached GrainTunings within `reach`.
  std::optional<LearnedDatasetProfile> LearnedProfile(const LearningReach& reach,
                                                      const std::string& dataset,
                                                      const std::string& machine_type) override;
  std::optional<LearnedDemand> LearnedDemandFor(const LearningReach& reach,
                                                const std::string& key) override;
  // Over the namespace's GrainTunings' status.runs, read in place.
  Result<std::optional<RunRecord>> RunFor(const std::string& ns,
                                          const std::string& checkpoint_dir) override;

 private:
  GrainTuningVisitor Visitor() const;
  std::shared_ptr<kube::Informer> graintunings_;
};

class JobCache : public JobStatusSource {
 public:
  explicit JobCache(std::shared_ptr<kube::Informer> jobs) : jobs_(std::move(jobs)) {}
  std::optional<int> FailedPods(const std::string& ns, const std::string& job) override;

 private:
  std::shared_ptr<kube::Informer> jobs_;
};

// Policies from the GrainTunePolicy and Namespace caches. A policy that does not parse is
// skipped (and reported by LastProblem) rather than applied half-way.
class PolicyCache : public PolicySource {
 public:
  PolicyCache(std::shared_ptr<kube::Informer> policies, std::shared_ptr<kube::Informer> namespaces)
      : policies_(std::move(policies)), namespaces_(std::move(namespaces)) {}
  Policy PolicyFor(const std::string& ns, const std::map<std::string, std::string>& labels) override;

 private:
  std::shared_ptr<kube::Informer> policies_;
  std::shared_ptr<kube::Informer> namespaces_;
};

}  // namespace graintune::workload
