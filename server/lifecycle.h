// Lifecycle: what the two server binaries (graintune-webhook, graintune-operator) do between
// wiring their parts and exiting, in one place:
//  1. Start the caches they read (informers, given as start / synced / stop functions, so this
//     layer needs no Kubernetes types);
//  2. report readiness: `on_ready(true)` once every cache is synced, checked every `poll`;
//  3. run background workers (the operator's reconcile loop and leader election), each on its
//     own thread with a stop token;
//  4. on SIGTERM or SIGINT (or Stop()): `on_ready(false)` first, so the load balancer stops
//     sending requests; keep serving for `shutdown_delay`; drain the servers (requests in
//     progress answered, for at most `shutdown_grace`); stop the workers and join them; stop the
//     caches.
// Periodic work (the webhook's certificate renewal) runs on the polling thread (Every()).
//
// Thread-safety: Add*/Every before Run; Stop() from any thread; Run() once, on the main thread
// (it installs the process's SIGTERM and SIGINT handlers). Nothing here exits the process.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <stop_token>
#include <thread>
#include <vector>

#include "server/https_server.h"

namespace graintune::server {

struct LifecycleOptions {
  std::chrono::milliseconds shutdown_delay{0};  // serving unready before draining
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(20)};
  std::chrono::milliseconds poll{200};
};

class Lifecycle {
 public:
  explicit Lifecycle(LifecycleOptions options = {}) : options_(options) {}
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  struct Cache {
    std::function<void()> start;
    std::function<bool()> synced;
    std::function<void()> stop;
  };
  void AddCache(Cache cache) { caches_.push_back(std::move(cache)); }
  // Drained at shutdown, in the order added (started by the caller, who reports its errors).
  void AddServer(HttpsServer& server) { servers_.push_back(&server); }
  // Runs `work` on its own thread from Run() until the stop token fires (shutdown).
  void AddWorker(std::function<void(std::stop_token)> work) { workers_.push_back(std::move(work)); }
  // Called every poll on Run()'s thread until shutdown.
  void Every(std::function<void()> tick) { ticks_.push_back(std::move(tick)); }

  // Whether every cache has synced (true with none).
  bool CachesSynced() const;
  // Steps 1-4 above; returns after the caches stopped. `on_ready` may be empty.
  void Run(const std::function<void(bool ready)>& on_ready);
  // Begins the shutdown, as SIGTERM does.
  void Stop() { stopping_ = true; }

 private:
  void Drain();

  const LifecycleOptions options_;
  std::vector<Cache> caches_;
  std::vector<HttpsServer*> servers_;
  std::vector<std::function<void(std::stop_token)>> workers_;
  std::vector<std::function<void()>> ticks_;
  std::atomic<bool> stopping_{false};
};

}  // namespace graintune::server
