#include "kube/informer.h"

#include "kube/backoff.h"

namespace graintune::kube {
namespace {

std::string ResourceVersionOf(const Json& object) {
  return object.value("metadata", Json::object()).value("resourceVersion", "");
}

}  // namespace

Informer::Informer(std::shared_ptr<Client> client, ResourceType type, InformerOptions options,
                   InformerHandlers handlers)
    : client_(std::move(client)), type_(std::move(type)), options_(std::move(options)),
      handlers_(std::move(handlers)) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void Informer::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Synced() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return Synced();
}

std::vector<Json> Informer::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Json> out;
  out.reserve(store_.size());
  for (const auto& [key, obj] : store_) out.push_back(obj);
  return out;
}

void Informer::Visit(const std::function<void(const Json&)>& visit) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, obj] : store_) visit(obj);
}

std::optional<Json> Informer::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = store_.find(ns + "/" + name);
  if (it == store_.end()) return std::nullopt;
  return it->second;
}

std::string Informer::ResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

std::string Informer::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

std::string Informer::KeyOf(const Json& object) {
  const Json meta = object.value("metadata", Json::object());
  return meta.value("namespace", "") + "/" + meta.value("name", "");
}

bool Informer::ListAndReplace(std::stop_token stop) {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  ApiResult<ObjectList> list = client_->List(type_, options_.ns, lo, stop);
  if (!list.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = "list " + type_.plural + ": " + list.error().ToString();
    return false;
  }
  // Diff against the cache so handlers see what changed while we were not watching.
  std::map<std::string, Json> fresh;
  for (Json& item : list->items) {
    if (options_.transform) options_.transform(item);
    fresh.emplace(KeyOf(item), std::move(item));
  }
  std::vector<Json> added, deleted;
  std::vector<std::pair<Json, Json>> updated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, obj] : fresh) {
      auto it = store_.find(key);
      if (it == store_.end()) {
        added.push_back(obj);
      } else if (ResourceVersionOf(it->second) != ResourceVersionOf(obj)) {
        updated.emplace_back(it->second, obj);
      }
    }
    for (const auto& [key, obj] : store_)
      if (!fresh.count(key)) deleted.push_back(obj);
    store_ = std::move(fresh);
    resource_version_ = list->resource_version;
    last_error_.clear();
  }
  for (const Json& o : added) if (handlers_.on_add) handlers_.on_add(o);
  for (const auto& [o, n] : updated) if (handlers_.on_update) handlers_.on_update(o, n);
  for (const Json& o : deleted) if (handlers_.on_delete) handlers_.on_delete(o);
  // After the handlers: whoever waits for Synced() also sees what they built from the list
  // (the operator's pod index).
  synced_ = true;
  return true;
}

void DropManagedFields(Json& object) {
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object())
    object["metadata"].erase("managedFields");
}

void Informer::Apply(const WatchEvent& raw) {
  WatchEvent transformed;
  if (options_.transform) {
    transformed = raw;
    options_.transform(transformed.object);
  }
  const WatchEvent& event = options_.transform ? transformed : raw;
  const std::string key = KeyOf(event.object);
  std::optional<Json> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = store_.find(key);
    if (it != store_.end()) old = it->second;
    if (event.type == "DELETED") {
      store_.erase(key);
    } else {
      store_[key] = event.object;
    }
    const std::string rv = ResourceVersionOf(event.object);
    if (!rv.empty()) resource_version_ = rv;
  }
  if (event.type == "DELETED") {
    if (handlers_.on_delete) handlers_.on_delete(old ? *old : event.object);
  } else if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, event.object);
  } else if (handlers_.on_add) {
    handlers_.on_add(event.object);
  }
}

void Informer::Run(std::stop_token stop) {
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::seconds(10));
  bool need_list = true;
  bool first_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      if (!ListAndReplace(stop)) {
        SleepFor(backoff.Next(), stop);
        continue;
      }
      if (!first_list) ++relists_;
      first_list = false;
      need_list = false;
      backoff.Reset();
    }
    WatchOptions wo;
    wo.resource_version = ResourceVersion();
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.timeout_seconds = options_.watch_timeout_seconds;
    ApiResult<WatchEnd> end = client_->Watch(
        type_, options_.ns, wo,
        [this](const WatchEvent& e) {
          Apply(e);
          return true;
        },
        stop);
    if (end.ok()) {
      // The server closed the stream (its timeout): pick up from the last version, bookmarks
      // included.
      std::lock_guard<std::mutex> lock(mu_);
      if (!end->last_resource_version.empty()) resource_version_ = end->last_resource_version;
      last_error_.clear();
      backoff.Reset();
      continue;
    }
    if (end.error().IsCancelled()) break;
    if (end.error().IsGone()) {
      need_list = true;  // our version was compacted away: only a fresh list is complete
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = "watch " + type_.plural + ": " + end.error().ToString();
    }
    // API server down or the stream broke: resume from the last version after a pause.
    SleepFor(backoff.Next(), stop);
  }
}

}  // namespace graintune::kube
