// ConnectionBudget: which connections the server keeps. It sheds what attacks (connections that
// hold a slot without using it) and never what works (a connection carrying a request promptly,
// or being answered), so a burst of admissions from the API server's one address is served while
// an idle flood from any address locks no one out.
//
// Each connection is in one state, told by its session as it goes:
//   opening    accepted, TLS handshake in progress
//   waiting    ready for a request header: a new connection (its first request's deadline, the
//              server's header timeout, bounds it) or a kept-alive one between requests, *idle*
//              once it has waited `grace` or longer
//   reading    its request header arrived, the body is being read; *slow* once `grace` passed
//   answering  the request is being handled or its answer written: never shed
// Rule (docs/hardening.md, "Fair connections"):
//   - per source (client address): at most max_idle_per_source idle (kept-alive) or slow
//     connections; Sweep reclaims the oldest past that (reason kIdleOverShare / kSlowOverShare).
//     However many connections an address holds with requests in flight, or new ones about to
//     send their first, none is refused or reclaimed for the share.
//   - globally, at most max_connections open (the memory bound). A new connection past it takes
//     the slot of one reclaimable connection (opening, waiting, or slow): from the source holding
//     the most connections waiting or reading past the grace (then the most reclaimable ones),
//     its oldest first (kForRoom), as nginx reuses its oldest waiting connections when
//     worker_connections run out. Only when every open connection is reading promptly or being
//     answered is the new one refused (kRefusedFull).
// A reclaimed connection is the caller's to close; it no longer counts against the ceiling and
// it cannot start a request (RequestStarted and BodyRead answer false).
//
// Pure: time comes in as an argument (a steady clock's readings), no I/O or logging inside.
// Thread-safe (one mutex). Memory: one entry per open connection; Open at the ceiling and Sweep
// are O(open connections), everything else O(log sources).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace graintune::server {

using SteadyTime = std::chrono::steady_clock::time_point;
using ConnectionId = std::uint64_t;

struct ConnectionLimits {
  int max_connections = 1024;
  // The API server keeps up to 25 idle connections per replica (client-go's idleConnsPerHost);
  // 128 leaves room for five replicas behind one address (konnectivity).
  int max_idle_per_source = 128;
  std::chrono::milliseconds grace{1000};
};

enum class ShedReason { kRefusedFull, kIdleOverShare, kSlowOverShare, kForRoom };
inline constexpr int kShedReasons = 4;
// "refused_full", "idle_over_share", "slow_over_share", "reclaimed_for_room": the label values
// of the webhook's metric.
const char* ShedReasonName(ShedReason reason);

struct Reclaim {
  ConnectionId id;
  ShedReason reason;
};

struct Admission {
  std::optional<ConnectionId> id;  // empty: refused (kRefusedFull)
  std::vector<Reclaim> reclaim;    // to close now to make room (at most one)
};

class ConnectionBudget {
 public:
  explicit ConnectionBudget(ConnectionLimits limits) : limits_(limits) {}

  // A connection accepted from `source`, in state opening.
  Admission Open(const std::string& source, SteadyTime now);
  // Handshake done (or none): waiting.
  void Ready(ConnectionId id, SteadyTime now);
  // A request header arrived: reading. False when the connection was reclaimed: close it.
  bool RequestStarted(ConnectionId id, SteadyTime now);
  // The body arrived: answering. False when the connection was reclaimed (it was slow).
  bool BodyRead(ConnectionId id);
  // The answer was written and the connection is kept alive: waiting again.
  void Answered(ConnectionId id, SteadyTime now);
  // The connection has ended (a stray id changes nothing).
  void Close(ConnectionId id);
  // The idle and slow connections past their source's share, oldest first; each is marked
  // reclaimed. Called periodically (every grace / 4 by the server).
  std::vector<Reclaim> Sweep(SteadyTime now);

  int open() const;  // open connections, reclaimed ones not yet closed included
  int open_from(const std::string& source) const;
  int at_work() const;  // reading or answering a request
  size_t sources() const;

 private:
  enum class State { kOpening, kWaiting, kReading, kAnswering, kReclaimed };
  struct Entry {
    std::string source;
    State state;
    SteadyTime since;
    bool used = false;  // has carried a request
  };
  // Waiting or reading for `grace` or longer.
  bool Stale(const Entry& e, SteadyTime now) const;
  // Counted against its source's share: idle after a request, or slow.
  bool OverShare(const Entry& e, SteadyTime now) const;
  bool Reclaimable(const Entry& e, SteadyTime now) const;
  std::optional<ConnectionId> VictimForRoom(SteadyTime now) const;
  void Set(ConnectionId id, State state, SteadyTime now);

  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  ConnectionId next_id_ = 1;
  int reclaimed_ = 0;  // entries in kReclaimed
  std::unordered_map<ConnectionId, Entry> entries_;
  std::map<std::string, int> by_source_;
};

}  // namespace graintune::server
