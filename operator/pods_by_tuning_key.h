// PodsByTuningKey: which pods of the pod cache belong to which tuning key, kept up to date from
// the pod informer's events, so that a reconcile reads its key's few pods by name instead of
// walking every pod in the cluster (client-go's indexer, for the one index the operator needs).
//
// Contract: Set(pod) after a pod was added or changed, Remove(pod) after it was deleted; both
// return the keys whose pod set changed or whose pod changed (to queue them). A pod that names
// no key (TuningKeyOfPod) is not indexed. Names only: the objects stay in the informer's cache,
// so memory is O(pods) short strings. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "operator/tuning_key.h"

namespace graintune::op {

class PodsByTuningKey {
 public:
  std::vector<TuningKey> Set(const nlohmann::json& pod);
  std::vector<TuningKey> Remove(const nlohmann::json& pod);

  // Names of the key's pods (in key.ns), sorted.
  std::vector<std::string> PodsOf(const TuningKey& key) const;
  // Every key with a pod; with `ns`, only that namespace's.
  std::vector<TuningKey> Keys() const;
  std::vector<TuningKey> KeysIn(const std::string& ns) const;

 private:
  // Drops `pod_name`'s entry; the key it had, if any. Caller holds mu_.
  std::optional<TuningKey> EraseLocked(const std::string& ns, const std::string& pod_name);

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, TuningKey> key_of_pod_;  // (ns, name) -> key
  std::map<TuningKey, std::set<std::string>> pods_of_key_;
};

}  // namespace graintune::op
