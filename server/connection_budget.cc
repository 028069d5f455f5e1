#include "server/connection_budget.h"

namespace graintune::server {

bool ConnectionBudget::TryAdmit(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_source_.find(source);
  const int from_source = it == by_source_.end() ? 0 : it->second;
  if (open_ >= limits_.max_connections || from_source >= limits_.max_per_source) return false;
  if (open_ >= limits_.max_connections - limits_.reserved && from_source >= limits_.reserved_per_source)
    return false;
  ++open_;
  if (it == by_source_.end()) by_source_.emplace(source, 1);
  else ++it->second;
  return true;
}

void ConnectionBudget::Release(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_source_.find(source);
  if (it == by_source_.end()) return;
  --open_;
  if (--it->second == 0) by_source_.erase(it);
}

int ConnectionBudget::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

int ConnectionBudget::open_from(const std::string& source) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_source_.find(source);
  return it == by_source_.end() ? 0 : it->second;
}

size_t ConnectionBudget::sources() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_source_.size();
}

}  // namespace graintune::server
