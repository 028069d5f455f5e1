#include "operator/work_queue.h"

#include <algorithm>

namespace graintune::op {

WorkQueue::WorkQueue(WorkQueueOptions options) : options_(std::move(options)) {}

WorkQueue::TimePoint WorkQueue::Now() const {
  return options_.clock->SteadyNow();
}

void WorkQueue::AddLocked(const TuningKey& key) {
  if (shut_down_ || !dirty_.insert(key).second) return;
  if (processing_.count(key)) return;  // queued again at Done
  ready_.push_back(key);
  changed_.notify_one();
}

void WorkQueue::Add(const TuningKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const TuningKey& key, std::chrono::milliseconds delay) {
  if (delay <= std::chrono::milliseconds(0)) return Add(key);
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return;
  const TimePoint due = Now() + delay;
  auto [it, fresh] = delayed_.try_emplace(key, due);
  if (!fresh) {
    if (it->second <= due) return;  // an earlier requeue is already pending
    delayed_order_.erase({it->second, key});
    it->second = due;
  }
  delayed_order_.insert({due, key});
  changed_.notify_all();  // a waiting Get may have to wake earlier
}

void WorkQueue::AddRateLimited(const TuningKey& key) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rate_limits_.find(key);
    if (it == rate_limits_.end())
      it = rate_limits_
               .emplace(key, RateLimit{.backoff = Backoff(BackoffPolicy{.initial = options_.backoff_initial,
                                                                        .max = options_.backoff_max,
                                                                        .jitter = false})})
               .first;
    delay = it->second.backoff.Next();
    it->second.until = Now() + delay;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const TuningKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  rate_limits_.erase(key);
}

int WorkQueue::Requeues(const TuningKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rate_limits_.find(key);
  return it == rate_limits_.end() ? 0 : it->second.backoff.failures();
}

std::chrono::milliseconds WorkQueue::RateLimitedFor(const TuningKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rate_limits_.find(key);
  if (it == rate_limits_.end()) return std::chrono::milliseconds(0);
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::ceil<std::chrono::milliseconds>(it->second.until - Now()));
}

void WorkQueue::PromoteDueLocked(TimePoint now) {
  while (!delayed_order_.empty() && delayed_order_.begin()->first <= now) {
    const TuningKey key = delayed_order_.begin()->second;
    delayed_order_.erase(delayed_order_.begin());
    delayed_.erase(key);
    AddLocked(key);
  }
}

std::optional<TuningKey> WorkQueue::TryGet() {
  std::lock_guard<std::mutex> lock(mu_);
  PromoteDueLocked(Now());
  if (shut_down_ || ready_.empty()) return std::nullopt;
  TuningKey key = std::move(ready_.front());
  ready_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

std::optional<TuningKey> WorkQueue::Get(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shut_down_ && !stop.stop_requested()) {
    const TimePoint now = Now();
    PromoteDueLocked(now);
    if (!ready_.empty()) {
      TuningKey key = std::move(ready_.front());
      ready_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      return key;
    }
    // Wake for an Add, a ShutDown, a stop, or when the earliest delay passes.
    const size_t delayed_before = delayed_order_.size();
    const auto earliest =
        delayed_order_.empty() ? std::optional<TimePoint>() : delayed_order_.begin()->first;
    auto woken = [&] {
      return shut_down_ || !ready_.empty() || delayed_order_.size() != delayed_before ||
             (!delayed_order_.empty() && delayed_order_.begin()->first != *earliest);
    };
    if (earliest)
      changed_.wait_until(lock, stop, std::chrono::steady_clock::now() + (*earliest - now), woken);
    else
      changed_.wait(lock, stop, woken);
  }
  return std::nullopt;
}

void WorkQueue::Done(const TuningKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shut_down_) {
    ready_.push_back(key);
    changed_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  changed_.notify_all();
}

WorkQueueDepth WorkQueue::Depth() {
  std::lock_guard<std::mutex> lock(mu_);
  PromoteDueLocked(Now());
  return {ready_.size(), delayed_.size(), processing_.size()};
}

}  // namespace graintune::op
