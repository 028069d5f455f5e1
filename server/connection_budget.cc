#include "server/connection_budget.h"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace graintune::server {

const char* ShedReasonName(ShedReason reason) {
  switch (reason) {
    case ShedReason::kRefusedFull: return "refused_full";
    case ShedReason::kIdleOverShare: return "idle_over_share";
    case ShedReason::kSlowOverShare: return "slow_over_share";
    case ShedReason::kForRoom: return "reclaimed_for_room";
  }
  return "unknown";
}

bool ConnectionBudget::Stale(const Entry& e, SteadyTime now) const {
  return (e.state == State::kWaiting || e.state == State::kReading) && now - e.since >= limits_.grace;
}

bool ConnectionBudget::OverShare(const Entry& e, SteadyTime now) const {
  return Stale(e, now) && (e.used || e.state == State::kReading);
}

bool ConnectionBudget::Reclaimable(const Entry& e, SteadyTime now) const {
  return e.state == State::kOpening || e.state == State::kWaiting ||
         (e.state == State::kReading && Stale(e, now));
}

// The oldest idle or slow connection of the source holding the most of them; when no source
// holds one, the oldest reclaimable connection of the source holding the most of those.
std::optional<ConnectionId> ConnectionBudget::VictimForRoom(SteadyTime now) const {
  struct Tally {
    int stale = 0, reclaimable = 0;
    std::optional<std::pair<SteadyTime, ConnectionId>> oldest_stale, oldest;
  };
  std::map<std::string_view, Tally> tallies;
  for (const auto& [id, e] : entries_) {
    if (!Reclaimable(e, now)) continue;
    Tally& t = tallies[e.source];
    ++t.reclaimable;
    const std::pair<SteadyTime, ConnectionId> key{e.since, id};
    if (!t.oldest || key < *t.oldest) t.oldest = key;
    if (Stale(e, now)) {
      ++t.stale;
      if (!t.oldest_stale || key < *t.oldest_stale) t.oldest_stale = key;
    }
  }
  const Tally* heaviest = nullptr;
  for (const auto& [source, t] : tallies)
    if (!heaviest || std::tie(t.stale, t.reclaimable) > std::tie(heaviest->stale, heaviest->reclaimable))
      heaviest = &t;
  if (!heaviest) return std::nullopt;
  return heaviest->oldest_stale ? heaviest->oldest_stale->second : heaviest->oldest->second;
}

Admission ConnectionBudget::Open(const std::string& source, SteadyTime now) {
  std::lock_guard<std::mutex> lock(mu_);
  Admission admission;
  if (static_cast<int>(entries_.size()) - reclaimed_ >= limits_.max_connections) {
    const std::optional<ConnectionId> victim = VictimForRoom(now);
    if (!victim) return admission;  // refused: every open connection is at work
    entries_.at(*victim).state = State::kReclaimed;
    ++reclaimed_;
    admission.reclaim.push_back({*victim, ShedReason::kForRoom});
  }
  const ConnectionId id = next_id_++;
  entries_.emplace(id, Entry{source, State::kOpening, now});
  ++by_source_[source];
  admission.id = id;
  return admission;
}

void ConnectionBudget::Set(ConnectionId id, State state, SteadyTime now) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state == State::kReclaimed) return;
  it->second.state = state;
  it->second.since = now;
}

void ConnectionBudget::Ready(ConnectionId id, SteadyTime now) {
  std::lock_guard<std::mutex> lock(mu_);
  Set(id, State::kWaiting, now);
}

bool ConnectionBudget::RequestStarted(ConnectionId id, SteadyTime now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state == State::kReclaimed) return false;
  Set(id, State::kReading, now);
  it->second.used = true;
  return true;
}

bool ConnectionBudget::BodyRead(ConnectionId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state == State::kReclaimed) return false;
  it->second.state = State::kAnswering;
  return true;
}

void ConnectionBudget::Answered(ConnectionId id, SteadyTime now) {
  std::lock_guard<std::mutex> lock(mu_);
  Set(id, State::kWaiting, now);
}

void ConnectionBudget::Close(ConnectionId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.state == State::kReclaimed) --reclaimed_;
  auto source = by_source_.find(it->second.source);
  if (source != by_source_.end() && --source->second == 0) by_source_.erase(source);
  entries_.erase(it);
}

std::vector<Reclaim> ConnectionBudget::Sweep(SteadyTime now) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string_view, std::vector<std::pair<SteadyTime, ConnectionId>>> stale;
  for (const auto& [id, e] : entries_)
    if (OverShare(e, now)) stale[e.source].emplace_back(e.since, id);
  std::vector<Reclaim> out;
  for (auto& [source, list] : stale) {
    const size_t share = static_cast<size_t>(std::max(0, limits_.max_idle_per_source));
    if (list.size() <= share) continue;
    std::sort(list.begin(), list.end());
    for (size_t i = 0; i < list.size() - share; ++i) {
      Entry& e = entries_.at(list[i].second);
      out.push_back({list[i].second, e.state == State::kReading ? ShedReason::kSlowOverShare
                                                                : ShedReason::kIdleOverShare});
      e.state = State::kReclaimed;
      ++reclaimed_;
    }
  }
  return out;
}

int ConnectionBudget::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(entries_.size());
}

int ConnectionBudget::open_from(const std::string& source) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_source_.find(source);
  return it == by_source_.end() ? 0 : it->second;
}

int ConnectionBudget::at_work() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const auto& e) {
    return e.second.state == State::kReading || e.second.state == State::kAnswering;
  }));
}

size_t ConnectionBudget::sources() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_source_.size();
}

}  // namespace graintune::server
