// WorkQueue: the operator's queue of tuning keys to reconcile, in the shape of client-go's
// rate-limited work queue that controller-runtime's controllers run on.
//
//  - De-duplicating: a key waits in the queue at most once; Add of a key already waiting is
//    a no-op. Events that arrive in a burst cost one reconcile.
//  - One worker per key: Get hands a key out and marks it processing until Done(key); the key
//    is never handed to a second worker meanwhile. Adds while it is processing are coalesced
//    into one, and the key is queued again at Done.
//  - Delayed: AddAfter(key, d) queues the key once `d` has passed; of several delays pending
//    for one key the earliest wins, so periodic requeues never pile up.
//  - Rate-limited: the operator's one rate limiter. AddRateLimited(key) delays by the key's
//    Backoff (base/backoff.h, no jitter): backoff_initial * 2^n, at most backoff_max, where n
//    counts the key's AddRateLimited calls since its last Forget(key). An Add meanwhile still
//    queues the key at once; RateLimitedFor(key) tells its worker that the key's delay has not
//    passed, and the delayed entry brings the key back when it has.
//  - Bounded: each key is at most once in each of ready / waiting / processing, and has at most
//    one failure count: memory is O(keys).
//
// Time: "now" is the injected clock's steady time (base/clock.h). Delays are judged
// against it whenever the queue is read (TryGet, Get, Depth); a blocked Get also sleeps until
// the earliest delay would pass on the real clock, so with a fake clock tests read with TryGet.
//
// Thread-safety: every method may be called from any thread. ShutDown() wakes every Get,
// which then returns nullopt; Adds after ShutDown are dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>

#include "base/backoff.h"
#include "base/clock.h"
#include "operator/tuning_key.h"

namespace graintune::op {

struct WorkQueueOptions {
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{std::chrono::minutes(5)};
  const Clock* clock = &RealClock();  // never null
};

// How many keys are where, for metrics.
struct WorkQueueDepth {
  size_t ready = 0;       // waiting for a worker
  size_t delayed = 0;     // waiting for a requeue or backoff delay
  size_t processing = 0;  // handed out, not Done yet
};

class WorkQueue {
 public:
  // A time on the injected clock (options.clock): its steady time.
  using TimePoint = Clock::SteadyTime;

  explicit WorkQueue(WorkQueueOptions options = {});

  void Add(const TuningKey& key);
  void AddAfter(const TuningKey& key, std::chrono::milliseconds delay);
  void AddRateLimited(const TuningKey& key);
  // The key's failures are forgotten: its next AddRateLimited waits backoff_initial again.
  void Forget(const TuningKey& key);
  // AddRateLimited calls since the key's last Forget.
  int Requeues(const TuningKey& key) const;
  // How long the delay of the key's last AddRateLimited (since its last Forget) has still to
  // run; zero once it has passed.
  std::chrono::milliseconds RateLimitedFor(const TuningKey& key) const;

  // The next ready key, marked processing; nullopt when none is ready now.
  std::optional<TuningKey> TryGet();
  // Waits for a ready key; nullopt once ShutDown() or `stop` is requested.
  std::optional<TuningKey> Get(std::stop_token stop);
  // Processing of `key` ended; when it was added meanwhile, it is queued again.
  void Done(const TuningKey& key);

  void ShutDown();
  WorkQueueDepth Depth();

 private:
  TimePoint Now() const;
  // Moves every delayed key that is due to ready. Caller holds mu_.
  void PromoteDueLocked(TimePoint now);
  void AddLocked(const TuningKey& key);

  const WorkQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable_any changed_;
  std::deque<TuningKey> ready_;
  std::set<TuningKey> dirty_;       // in ready_, or added while processing
  std::set<TuningKey> processing_;
  std::map<TuningKey, TimePoint> delayed_;                  // key -> when due
  std::set<std::pair<TimePoint, TuningKey>> delayed_order_;  // earliest first
  struct RateLimit {
    Backoff backoff;
    TimePoint until{};
  };
  std::map<TuningKey, RateLimit> rate_limits_;
  bool shut_down_ = false;
};

}  // namespace graintune::op
