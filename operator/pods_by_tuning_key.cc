#include "operator/pods_by_tuning_key.h"

namespace graintune::op {
namespace {

std::pair<std::string, std::string> NameOf(const nlohmann::json& pod) {
  const nlohmann::json meta = pod.value("metadata", nlohmann::json::object());
  return {meta.value("namespace", ""), meta.value("name", "")};
}

}  // namespace

std::optional<TuningKey> PodsByTuningKey::EraseLocked(const std::string& ns,
                                                      const std::string& pod_name) {
  auto it = key_of_pod_.find({ns, pod_name});
  if (it == key_of_pod_.end()) return std::nullopt;
  TuningKey old = it->second;
  key_of_pod_.erase(it);
  auto pods = pods_of_key_.find(old);
  if (pods != pods_of_key_.end()) {
    pods->second.erase(pod_name);
    if (pods->second.empty()) pods_of_key_.erase(pods);
  }
  return old;
}

std::vector<TuningKey> PodsByTuningKey::Set(const nlohmann::json& pod) {
  const auto [ns, name] = NameOf(pod);
  const std::optional<TuningKey> key = TuningKeyOfPod(pod);
  IndexedPod indexed;
  if (key) {
    indexed.facts = PodFactsFromJson(pod);
    const nlohmann::json* meta = pod.contains("metadata") ? &pod["metadata"] : nullptr;
    if (meta && meta->is_object()) indexed.resource_version = meta->value("resourceVersion", "");
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TuningKey> touched;
  if (std::optional<TuningKey> old = EraseLocked(ns, name); old && old != key)
    touched.push_back(*old);
  if (key) {
    key_of_pod_[{ns, name}] = *key;
    pods_of_key_[*key][name] = std::move(indexed);
    touched.push_back(*key);
  }
  return touched;
}

std::vector<TuningKey> PodsByTuningKey::Remove(const nlohmann::json& pod) {
  const auto [ns, name] = NameOf(pod);
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TuningKey> old = EraseLocked(ns, name);
  if (!old) return {};
  return {*old};
}

std::vector<std::string> PodsByTuningKey::PodsOf(const TuningKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_of_key_.find(key);
  if (it == pods_of_key_.end()) return {};
  std::vector<std::string> names;
  names.reserve(it->second.size());
  for (const auto& [name, pod] : it->second) names.push_back(name);
  return names;
}

std::vector<IndexedPod> PodsByTuningKey::FactsOf(const TuningKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_of_key_.find(key);
  if (it == pods_of_key_.end()) return {};
  std::vector<IndexedPod> pods;
  pods.reserve(it->second.size());
  for (const auto& [name, pod] : it->second) pods.push_back(pod);
  return pods;
}

std::vector<TuningKey> PodsByTuningKey::Keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TuningKey> out;
  out.reserve(pods_of_key_.size());
  for (const auto& [key, pods] : pods_of_key_) out.push_back(key);
  return out;
}

std::vector<TuningKey> PodsByTuningKey::KeysIn(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TuningKey> out;
  for (auto it = pods_of_key_.lower_bound(TuningKey{ns, ""});
       it != pods_of_key_.end() && it->first.ns == ns; ++it)
    out.push_back(it->first);
  return out;
}

}  // namespace graintune::op
