// ConnectionBudget: which new connection the server admits, so that no single client address
// can take the whole connection budget, and the API server's few addresses always find room.
//
// Rule, for a connection from `source` that holds `n` connections now, with `total` open:
//   refused when total >= max_connections                      (the memory bound)
//   refused when n >= max_per_source                           (no address takes it all)
//   refused when total >= max_connections - reserved and n >= reserved_per_source
//                                                              (the last `reserved` slots go to
//                                                               addresses holding few, as the
//                                                               API server's do)
// Numbers and why: docs/hardening.md ("Fair connections"). Memory: one map entry per address
// with a connection open, so at most max_connections entries. Thread-safe; O(log addresses)
// per call.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace graintune::server {

struct ConnectionLimits {
  int max_connections = 1024;
  int max_per_source = 64;
  int reserved = 128;
  int reserved_per_source = 8;
};

class ConnectionBudget {
 public:
  explicit ConnectionBudget(ConnectionLimits limits) : limits_(limits) {}

  // True, and the connection counted against `source`, when the rule admits it.
  bool TryAdmit(const std::string& source);
  // A connection TryAdmit admitted has ended.
  void Release(const std::string& source);

  int open() const;
  int open_from(const std::string& source) const;
  size_t sources() const;

 private:
  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  int open_ = 0;
  std::map<std::string, int> by_source_;
};

}  // namespace graintune::server
