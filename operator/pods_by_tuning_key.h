// PodsByTuningKey: which pods of the pod cache belong to which tuning key, kept up to date from
// the pod informer's events, so that a reconcile reads its key's few pods by name instead of
// walking every pod in the cluster (client-go's indexer, for the one index the operator needs).
//
// Contract: Set(pod) after a pod was added or changed, Remove(pod) after it was deleted; both
// return the keys whose pod set changed or whose pod changed (to queue them). A pod that names
// no key (TuningKeyOfPod) is not indexed. Each entry keeps the pod's PodFacts and
// resourceVersion, read once per event: a reconcile of a 256-pod slice reads its pods' facts
// without copying or re-reading 256 Pod objects, and fetches from the cache only the one pod
// whose spec it needs. The objects stay in the informer's cache; memory is O(pods) small
// records. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "operator/pod_facts.h"
#include "operator/tuning_key.h"

namespace graintune::op {

// A pod of a key as its last event showed it.
struct IndexedPod {
  PodFacts facts;
  std::string resource_version;
};

class PodsByTuningKey {
 public:
  std::vector<TuningKey> Set(const nlohmann::json& pod);
  std::vector<TuningKey> Remove(const nlohmann::json& pod);

  // Names of the key's pods (in key.ns), sorted.
  std::vector<std::string> PodsOf(const TuningKey& key) const;
  // The key's pods as their last events showed them, sorted by name.
  std::vector<IndexedPod> FactsOf(const TuningKey& key) const;
  // Every key with a pod; with `ns`, only that namespace's.
  std::vector<TuningKey> Keys() const;
  std::vector<TuningKey> KeysIn(const std::string& ns) const;

 private:
  // Drops `pod_name`'s entry; the key it had, if any. Caller holds mu_.
  std::optional<TuningKey> EraseLocked(const std::string& ns, const std::string& pod_name);

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, TuningKey> key_of_pod_;  // (ns, name) -> key
  std::map<TuningKey, std::map<std::string, IndexedPod>> pods_of_key_;  // key -> name -> pod
};

}  // namespace graintune::op
