// What the webhook reads besides the object under admission, each behind a small interface so
// the decision can be tested with in-memory fakes (fake_sources.h) and served from the API's
// watched caches in a cluster (kube/).
//
// Contract for every source: calls are cheap (they read caches, never the network on the
// admission path), thread-safe, and report failure as a value: an error Result means "could not
// tell" (cache not synced, API down) and the webhook fails open with a warning; an empty
// optional means "known to be absent".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/attempt_value.h"
#include "tuner/dataset_profile.h"
#include "tuner/decision.h"
#include "tuner/host_shape.h"
#include "tuner/policy.h"
#include "base/status.h"
#include "tuner/trial.h"

namespace graintune::workload {

// Where a pod may land: its nodeSelector and the In-expressions of its required node affinity
// (every term's expressions; any one term matching is enough, as in Kubernetes), and the TPU
// chips it asks for.
struct NodeSelection {
  std::map<std::string, std::string> node_selector;
  // One map per nodeSelectorTerm: label -> allowed values.
  std::vector<std::map<std::string, std::vector<std::string>>> required_terms;
  // The largest google.com/tpu limit among the pod's containers; 0 when none asks for chips.
  // A 2x4 v5e / v6e slice is one 8-chip host only for a pod that asks for 8 (MachineTypeForSlice).
  int tpu_chips = 0;
};

// True when the pod runs on a TPU host: it asks for chips, or selects a TPU accelerator or a
// TPU machine type. Otherwise it runs on a CPU host, as a Pathways head (xpk's
// `pathways-head`, on the `cpu-np` node pool) does: its trainer feeds chips on other hosts.
bool SelectsTpuHost(const NodeSelection& selection);

class NodeShapeSource {
 public:
  virtual ~NodeShapeSource() = default;
  // The host shape of the nodes the selection allows; error when none is known.
  virtual Result<HostShape> ShapeFor(const NodeSelection& selection) = 0;
};

// Whose learned figures a workload in `ns` reads: those measured by GrainTunings in its own
// namespace, and in the namespaces its policy's spec.learnFrom shares with it.
struct LearningReach {
  std::string ns;
  LearningScope scope;
  bool Includes(const std::string& measured_in) const { return scope.Includes(ns, measured_in); }
};

// A demand another workload measured: the throughput its fed attempts reached per host.
struct LearnedDemand {
  double tokens_per_second_per_host = 0;
  std::string grain_tuning;  // where it was measured: "team-a/llama-abc12"
};

// A dataset's profile (per-worker rate and memory) another workload measured.
struct LearnedDatasetProfile {
  DatasetProfile profile;
  std::string grain_tuning;  // where it was measured: "team-a/llama-abc12"
};

class HistorySource {
 public:
  virtual ~HistorySource() = default;
  virtual Result<std::optional<TuningHistory>> Lookup(const std::string& ns,
                                                      const std::string& tuning_key) = 0;
  // A profile learned for a dataset name (graintune.dev/dataset) from earlier workloads within
  // `reach` on hosts of `machine_type` (empty: unknown, matching only figures measured on
  // unknown hosts): a worker's rate depends on the host's cores as much as on the dataset.
  virtual std::optional<LearnedDatasetProfile> LearnedProfile(const LearningReach& reach,
                                                              const std::string& dataset,
                                                              const std::string& machine_type) = 0;
  // The demand measured by the newest earlier workload within `reach` whose fed attempts had
  // demand key `key` (workload/demand_key.h): the same model settings, batch and chips on the
  // same machine type. nullopt when none has.
  virtual std::optional<LearnedDemand> LearnedDemandFor(const LearningReach& reach,
                                                        const std::string& key) = 0;
  // The value a run writing `checkpoint_dir` was started with, recorded under any tuning key in
  // `ns` (a new workload resuming a directory graintune has seen); nullopt when none is.
  virtual Result<std::optional<RunRecord>> RunFor(const std::string& ns,
                                                  const std::string& checkpoint_dir) = 0;
};

class ConfigMapSource {
 public:
  virtual ~ConfigMapSource() = default;
  // The data of key `key` in ConfigMap ns/name; nullopt when the ConfigMap or key is absent.
  virtual Result<std::optional<std::string>> Get(const std::string& ns, const std::string& name,
                                                 const std::string& key) = 0;
  // Every key of ConfigMap ns/name with its data (a container's envFrom); nullopt when the
  // ConfigMap is absent. A source that cannot list a ConfigMap's keys answers an error.
  virtual Result<std::optional<std::map<std::string, std::string>>> Data(const std::string& ns,
                                                                         const std::string& name) {
    return Status::Error("ConfigMap " + ns + "/" + name + ": its keys cannot be listed here");
  }
};

// How many pods of a Job have failed so far (its status.failed): a plain Job's pod retry is the
// next attempt. nullopt when the Job is unknown.
class JobStatusSource {
 public:
  virtual ~JobStatusSource() = default;
  virtual std::optional<int> FailedPods(const std::string& ns, const std::string& job) = 0;
};

class PolicySource {
 public:
  virtual ~PolicySource() = default;
  // The policy in force for a workload in `ns` with `labels` (built-in defaults when none).
  virtual Policy PolicyFor(const std::string& ns,
                           const std::map<std::string, std::string>& labels) = 0;
};

// Resolves shapes from the built-in GKE TPU machine-type table using the selection's
// node.kubernetes.io/instance-type, or cloud.google.com/gke-tpu-accelerator with
// cloud.google.com/gke-tpu-topology. Stateless and thread-safe.
class MachineTypeTableShapes : public NodeShapeSource {
 public:
  Result<HostShape> ShapeFor(const NodeSelection& selection) override;
};

// Every value a label may take under the selection (nodeSelector value, or In-values of any
// required term), in order.
std::vector<std::string> LabelValues(const NodeSelection& selection, const std::string& label);

}  // namespace graintune::workload
