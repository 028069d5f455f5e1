// A watched cache of one resource type (client-go's informer, reduced to what graintune needs):
// list, then watch from the list's resourceVersion; keep the newest copy of every object; tell
// handlers about adds, updates and deletes; survive dropped streams and API server restarts by
// resuming from the last version seen, and relist (with synthetic add/update/delete for what
// changed meanwhile) when the server answers 410 Gone.
//
// Contract: Start() returns at once; the informer's own thread calls the handlers, one event at
// a time, never while holding the cache lock, so handlers may read the cache. Synced() is true
// once the first list is in and its handlers have run. Stop() (or the destructor) ends the thread promptly.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"

namespace graintune::kube {

struct InformerHandlers {
  std::function<void(const Json&)> on_add;
  std::function<void(const Json& old_object, const Json& new_object)> on_update;
  std::function<void(const Json&)> on_delete;
};

struct InformerOptions {
  std::string ns;  // empty: all namespaces
  std::string label_selector;
  std::string field_selector;
  int watch_timeout_seconds = 300;
  // Applied to every object before it is cached or handed to a handler (client-go's
  // TransformFunc): drop what the cache's users never read, e.g. DropManagedFields.
  std::function<void(Json&)> transform;
};

// Removes metadata.managedFields (server-side apply bookkeeping: often a third of an object).
void DropManagedFields(Json& object);

class Informer {
 public:
  Informer(std::shared_ptr<Client> client, ResourceType type, InformerOptions options = {},
           InformerHandlers handlers = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start();
  void Stop();
  bool Synced() const { return synced_.load(); }
  // Waits until Synced() or the timeout; returns Synced().
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  std::vector<Json> List() const;
  // Calls `visit` with every cached object, in the cache (no copies), under the cache lock: for
  // a reader that needs a few fields of many objects on a hot path (the webhook's per-admission
  // lookups). `visit` must be quick and must not call this informer.
  void Visit(const std::function<void(const Json&)>& visit) const;
  std::optional<Json> Get(const std::string& ns, const std::string& name) const;
  // The resourceVersion the cache is at (of the last event or list applied).
  std::string ResourceVersion() const;
  // How often the informer relisted after its first list (410 Gone); for tests and metrics.
  int Relists() const { return relists_.load(); }
  // The last error the loop met, empty when healthy; for /readyz.
  std::string LastError() const;

 private:
  void Run(std::stop_token stop);
  bool ListAndReplace(std::stop_token stop);
  void Apply(const WatchEvent& event);
  static std::string KeyOf(const Json& object);

  std::shared_ptr<Client> client_;
  const ResourceType type_;
  const InformerOptions options_;
  const InformerHandlers handlers_;

  mutable std::mutex mu_;
  std::map<std::string, Json> store_;  // namespace/name -> object
  std::string resource_version_;
  std::string last_error_;
  std::atomic<bool> synced_{false};
  std::atomic<int> relists_{0};
  std::jthread thread_;
};

}  // namespace graintune::kube
