// ConfigMapFetcher: the ConfigMaps tuned workloads mount, read on demand by name instead of
// through a watch of every ConfigMap in the cluster. The webhook needs a handful (the MaxText
// YAML a job mounts), a cluster holds thousands; a watch costs memory for all of them and RBAC
// to list and watch them all, a GET by name needs only `get`.
//
// Contract:
//   - Get(ns, name, key) answers from a bounded LRU cache of whole ConfigMaps (their `data`),
//     including "not found", each entry kept for `ttl`; a miss or an expired entry calls
//     `fetch` once (outside the lock; concurrent misses may fetch twice, never block each other).
//   - Bounded memory: at most `max_entries` ConfigMaps and `max_bytes` of their data (keys and
//     values); least recently used entries leave first. A ConfigMap larger than max_bytes is
//     answered but not cached.
//   - A fetch error is returned to the caller (the planner then warns and leaves the value) and
//     not cached, so the next request tries again.
// `fetch` must be bounded in time (the webhook gives it its own short request timeout).
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "workload/sources.h"

namespace graintune::workload {

struct ConfigMapFetcherOptions {
  size_t max_entries = 512;
  size_t max_bytes = 32u << 20;
  std::chrono::milliseconds ttl{10000};
};

class ConfigMapFetcher : public ConfigMapSource {
 public:
  // The ConfigMap's `data` (an object of strings), nullopt when it does not exist.
  using Fetch = std::function<Result<std::optional<nlohmann::json>>(const std::string& ns,
                                                                    const std::string& name)>;
  // `clock` (steady time) judges the ttl.
  explicit ConfigMapFetcher(Fetch fetch, ConfigMapFetcherOptions options = {},
                            const Clock& clock = RealClock());

  Result<std::optional<std::string>> Get(const std::string& ns, const std::string& name,
                                         const std::string& key) override;
  Result<std::optional<std::map<std::string, std::string>>> Data(const std::string& ns,
                                                                 const std::string& name) override;

  size_t entries() const;
  size_t bytes() const;
  uint64_t fetches() const;

 private:
  struct Entry {
    std::optional<nlohmann::json> data;  // nullopt: not found
    size_t bytes = 0;
    std::chrono::steady_clock::time_point fetched;
    std::list<std::pair<std::string, std::string>>::iterator lru;
  };
  using Key = std::pair<std::string, std::string>;

  // The ConfigMap's data, from the cache or fetched.
  Result<std::optional<nlohmann::json>> Lookup(const std::string& ns, const std::string& name);
  static std::optional<std::string> ValueOf(const std::optional<nlohmann::json>& data,
                                            const std::string& key);
  void Insert(const Key& key, std::optional<nlohmann::json> data);  // mu_ held
  void Evict(std::map<Key, Entry>::iterator it);                    // mu_ held

  Fetch fetch_;
  ConfigMapFetcherOptions options_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // most recent first
  size_t bytes_ = 0;
  uint64_t fetches_ = 0;
};

}  // namespace graintune::workload
