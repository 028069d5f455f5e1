#include "server/lifecycle.h"

#include <csignal>

#include "base/log.h"

namespace graintune::server {
namespace {

std::atomic<bool> g_signalled{false};
extern "C" void OnStopSignal(int) { g_signalled = true; }

}  // namespace

bool Lifecycle::CachesSynced() const {
  for (const Cache& c : caches_)
    if (!c.synced()) return false;
  return true;
}

void Lifecycle::Run(const std::function<void(bool ready)>& on_ready) {
  g_signalled = false;  // before its handler, a signal would have ended the process
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
  for (const Cache& c : caches_) c.start();
  std::vector<std::jthread> workers;
  for (const auto& work : workers_) workers.emplace_back(work);
  bool ready = false;
  while (!stopping_ && !g_signalled) {
    for (const auto& tick : ticks_) tick();
    if (!ready && CachesSynced()) {
      ready = true;
      if (on_ready) on_ready(true);
    }
    std::this_thread::sleep_for(options_.poll);
  }
  // Unready first, so the API server or load balancer stops picking this replica.
  if (on_ready) on_ready(false);
  Drain();
  for (std::jthread& w : workers) w.request_stop();
  workers.clear();  // joins
  for (const Cache& c : caches_) c.stop();
}

void Lifecycle::Drain() {
  LogLine(LogLevel::kInfo) << "stopping: unready, serving "
                           << std::chrono::duration_cast<std::chrono::seconds>(options_.shutdown_delay).count()
                           << " s more, then draining for at most "
                           << std::chrono::duration_cast<std::chrono::seconds>(options_.shutdown_grace).count()
                           << " s";
  std::this_thread::sleep_for(options_.shutdown_delay);
  bool drained = true;
  for (HttpsServer* s : servers_) drained = s->Drain(options_.shutdown_grace) && drained;
  LogLine(LogLevel::kInfo) << (drained ? "drained" : "grace period over, connections dropped");
  for (HttpsServer* s : servers_) s->Stop();
}

}  // namespace graintune::server
