#include "workload/configmap_fetcher.h"

namespace graintune::workload {

namespace {

size_t DataBytes(const std::optional<nlohmann::json>& data) {
  size_t bytes = 64;  // the entry itself
  if (!data || !data->is_object()) return bytes;
  for (const auto& [key, value] : data->items())
    bytes += key.size() + (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
  return bytes;
}

}  // namespace

ConfigMapFetcher::ConfigMapFetcher(Fetch fetch, ConfigMapFetcherOptions options,
                                   const Clock& clock)
    : fetch_(std::move(fetch)), options_(options), clock_(clock) {}

std::optional<std::string> ConfigMapFetcher::ValueOf(const std::optional<nlohmann::json>& data,
                                                     const std::string& key) {
  if (!data || !data->is_object()) return std::nullopt;
  auto it = data->find(key);
  if (it == data->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

Result<std::optional<nlohmann::json>> ConfigMapFetcher::Lookup(const std::string& ns,
                                                              const std::string& name) {
  const Key id{ns, name};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(id);
    if (it != entries_.end()) {
      if (clock_.SteadyNow() - it->second.fetched < options_.ttl) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        return it->second.data;
      }
      Evict(it);
    }
    ++fetches_;
  }
  Result<std::optional<nlohmann::json>> fetched = fetch_(ns, name);
  if (!fetched.ok()) return fetched.status();
  std::optional<nlohmann::json> data = *fetched;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(id); it != entries_.end()) Evict(it);  // a concurrent fetch's
  Insert(id, std::move(*fetched));
  return data;
}

Result<std::optional<std::string>> ConfigMapFetcher::Get(const std::string& ns,
                                                         const std::string& name,
                                                         const std::string& key) {
  Result<std::optional<nlohmann::json>> data = Lookup(ns, name);
  if (!data.ok()) return data.status();
  return ValueOf(*data, key);
}

Result<std::optional<std::map<std::string, std::string>>> ConfigMapFetcher::Data(
    const std::string& ns, const std::string& name) {
  Result<std::optional<nlohmann::json>> data = Lookup(ns, name);
  if (!data.ok()) return data.status();
  if (!*data) return std::optional<std::map<std::string, std::string>>();
  std::map<std::string, std::string> all;
  if ((*data)->is_object())
    for (const auto& [k, v] : (*data)->items())
      if (v.is_string()) all[k] = v.get<std::string>();
  return std::optional<std::map<std::string, std::string>>(std::move(all));
}

void ConfigMapFetcher::Insert(const Key& key, std::optional<nlohmann::json> data) {
  const size_t bytes = DataBytes(data);
  if (bytes > options_.max_bytes || options_.max_entries == 0) return;
  while (!lru_.empty() &&
         (entries_.size() >= options_.max_entries || bytes_ + bytes > options_.max_bytes))
    Evict(entries_.find(lru_.back()));
  lru_.push_front(key);
  entries_[key] = Entry{std::move(data), bytes, clock_.SteadyNow(), lru_.begin()};
  bytes_ += bytes;
}

void ConfigMapFetcher::Evict(std::map<Key, Entry>::iterator it) {
  bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

size_t ConfigMapFetcher::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t ConfigMapFetcher::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

uint64_t ConfigMapFetcher::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

}  // namespace graintune::workload
