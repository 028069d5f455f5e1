// The connection budget's rule, on a simulated clock: no sleeps, every time is an argument.
#include "server/connection_budget.h"

#include <gtest/gtest.h>

#include <set>

namespace graintune::server {
namespace {

using namespace std::chrono_literals;

const SteadyTime kStart{};

// A connection opened and made ready at `at`; its id (the test fails when it was refused).
ConnectionId OpenReady(ConnectionBudget& budget, const std::string& source, SteadyTime at) {
  Admission a = budget.Open(source, at);
  EXPECT_TRUE(a.id.has_value()) << source;
  budget.Ready(a.id.value_or(0), at);
  return a.id.value_or(0);
}

std::set<ConnectionId> Ids(const std::vector<Reclaim>& reclaims) {
  std::set<ConnectionId> out;
  for (const Reclaim& r : reclaims) out.insert(r.id);
  return out;
}

// The API server's burst: 256 connections from one address, each with a request in flight, are
// all kept, and the sweep reclaims none of them however long their answers take.
TEST(ConnectionBudgetTest, ABurstOfRequestsFromOneAddressIsNeverShed) {
  ConnectionBudget budget({.max_connections = 1024, .max_idle_per_source = 8, .grace = 1s});
  std::vector<ConnectionId> burst;
  for (int i = 0; i < 256; ++i) burst.push_back(OpenReady(budget, "172.16.0.2", kStart));
  for (ConnectionId id : burst) {
    ASSERT_TRUE(budget.RequestStarted(id, kStart + 10ms));
    ASSERT_TRUE(budget.BodyRead(id));
  }
  EXPECT_TRUE(budget.Sweep(kStart + 60s).empty());
  EXPECT_EQ(budget.open_from("172.16.0.2"), 256);
  // Answered and kept alive: a request on each within the grace keeps them all.
  for (ConnectionId id : burst) budget.Answered(id, kStart + 60s);
  EXPECT_TRUE(budget.Sweep(kStart + 60s + 999ms).empty());
  for (ConnectionId id : burst) EXPECT_TRUE(budget.RequestStarted(id, kStart + 60s + 999ms));
}

// A kept-alive connection: opened, one request answered at `at`, waiting for the next.
ConnectionId OpenUsed(ConnectionBudget& budget, const std::string& source, SteadyTime at) {
  const ConnectionId id = OpenReady(budget, source, at);
  EXPECT_TRUE(budget.RequestStarted(id, at));
  EXPECT_TRUE(budget.BodyRead(id));
  budget.Answered(id, at);
  return id;
}

// Idle connections past the grace are trimmed to the source's share, oldest first; fresh ones
// and other addresses are untouched.
TEST(ConnectionBudgetTest, IdleConnectionsPastTheShareAreReclaimedOldestFirst) {
  ConnectionBudget budget({.max_connections = 100, .max_idle_per_source = 3, .grace = 1s});
  std::vector<ConnectionId> flood;
  for (int i = 0; i < 6; ++i) flood.push_back(OpenUsed(budget, "10.0.0.7", kStart + i * 100ms));
  const ConnectionId other = OpenUsed(budget, "10.0.0.1", kStart);
  // Before the grace nothing is idle yet.
  EXPECT_TRUE(budget.Sweep(kStart + 999ms).empty());
  // At 1.2 s the first three have waited 1 s or more: within the share of 3.
  EXPECT_TRUE(budget.Sweep(kStart + 1200ms).empty());
  const std::vector<Reclaim> reclaimed = budget.Sweep(kStart + 2s);
  EXPECT_EQ(Ids(reclaimed), (std::set<ConnectionId>{flood[0], flood[1], flood[2]}));
  for (const Reclaim& r : reclaimed) EXPECT_EQ(r.reason, ShedReason::kIdleOverShare);
  // A reclaimed connection cannot start a request; the kept ones can.
  EXPECT_FALSE(budget.RequestStarted(flood[0], kStart + 2s));
  EXPECT_TRUE(budget.RequestStarted(flood[5], kStart + 2s));
  EXPECT_TRUE(budget.RequestStarted(other, kStart + 2s));
  EXPECT_TRUE(budget.Sweep(kStart + 10s).empty()) << "none over the share any more";
}

// New connections that have not sent their first request are left to the first request's
// deadline (the server's header timeout), never trimmed for the share: a client slow to send
// after its handshake, as a loaded API server can be, is not cut. At the ceiling they are the
// first to make room once past the grace.
TEST(ConnectionBudgetTest, NewConnectionsAreNotTrimmedForTheShareButMakeRoomFirst) {
  ConnectionBudget budget({.max_connections = 10, .max_idle_per_source = 2, .grace = 1s});
  std::vector<ConnectionId> never_sent;
  for (int i = 0; i < 8; ++i) never_sent.push_back(OpenReady(budget, "10.0.0.2", kStart + i * 1ms));
  EXPECT_TRUE(budget.Sweep(kStart + 4s).empty());
  const ConnectionId kept = OpenUsed(budget, "10.0.0.3", kStart + 3s);
  ASSERT_TRUE(budget.Open("10.0.0.3", kStart + 4s).id);
  Admission a = budget.Open("10.0.0.4", kStart + 4s);
  ASSERT_EQ(a.reclaim.size(), 1u);
  EXPECT_EQ(a.reclaim[0].id, never_sent[0]);
  EXPECT_TRUE(budget.RequestStarted(kept, kStart + 4s));
}

// A request whose body trickles past the grace is slow: it counts against the share like an
// idle connection and is reclaimed as one (reason slow); a prompt body is never counted.
TEST(ConnectionBudgetTest, ASlowBodyCountsAgainstTheShare) {
  ConnectionBudget budget({.max_connections = 100, .max_idle_per_source = 1, .grace = 1s});
  const ConnectionId slow_a = OpenReady(budget, "10.0.0.9", kStart);
  const ConnectionId slow_b = OpenReady(budget, "10.0.0.9", kStart);
  ASSERT_TRUE(budget.RequestStarted(slow_a, kStart + 10ms));
  ASSERT_TRUE(budget.RequestStarted(slow_b, kStart + 20ms));
  const std::vector<Reclaim> reclaimed = budget.Sweep(kStart + 3s);
  ASSERT_EQ(reclaimed.size(), 1u);
  EXPECT_EQ(reclaimed[0].id, slow_a);
  EXPECT_EQ(reclaimed[0].reason, ShedReason::kSlowOverShare);
  EXPECT_FALSE(budget.BodyRead(slow_a));
  EXPECT_TRUE(budget.BodyRead(slow_b));
}

// At the ceiling a new connection takes the slot of the oldest idle connection of the source
// holding the most idle ones, not a connection of the light source and not its own refusal.
TEST(ConnectionBudgetTest, AtTheCeilingTheHeaviestSourcesOldestIdleMakesRoom) {
  ConnectionBudget budget({.max_connections = 10, .max_idle_per_source = 100, .grace = 1s});
  std::vector<ConnectionId> heavy, light;
  for (int i = 0; i < 6; ++i) heavy.push_back(OpenReady(budget, "10.0.0.7", kStart + i * 10ms));
  for (int i = 0; i < 4; ++i) light.push_back(OpenReady(budget, "10.0.0.8", kStart));
  Admission api = budget.Open("172.16.0.2", kStart + 5s);
  ASSERT_TRUE(api.id.has_value());
  ASSERT_EQ(api.reclaim.size(), 1u);
  EXPECT_EQ(api.reclaim[0].id, heavy[0]);
  EXPECT_EQ(api.reclaim[0].reason, ShedReason::kForRoom);
  // The reclaimed one no longer counts against the ceiling but is open until closed.
  EXPECT_EQ(budget.open(), 11);
  budget.Close(heavy[0]);
  EXPECT_EQ(budget.open(), 10);
  // The next one takes the heavy source's next oldest.
  Admission next = budget.Open("10.0.0.8", kStart + 5s);
  ASSERT_EQ(next.reclaim.size(), 1u);
  EXPECT_EQ(next.reclaim[0].id, heavy[1]);
}

// Idle (past the grace) outranks fresh: a burst of fresh connections from the API server is left
// alone while a smaller source holds idle ones.
TEST(ConnectionBudgetTest, FreshConnectionsAreTakenOnlyWhenNoSourceHoldsIdleOnes) {
  ConnectionBudget budget({.max_connections = 10, .max_idle_per_source = 100, .grace = 1s});
  std::vector<ConnectionId> idle, burst;
  for (int i = 0; i < 3; ++i) idle.push_back(OpenReady(budget, "10.0.0.7", kStart));
  for (int i = 0; i < 7; ++i) burst.push_back(OpenReady(budget, "172.16.0.2", kStart + 2s));
  Admission a = budget.Open("172.16.0.2", kStart + 2s + 100ms);
  ASSERT_EQ(a.reclaim.size(), 1u);
  EXPECT_EQ(a.reclaim[0].id, idle[0]);
  // Handshakes in progress only (opening, never idle): the source holding most gives its oldest.
  ConnectionBudget opening({.max_connections = 3, .max_idle_per_source = 100, .grace = 1s});
  const ConnectionId first = *opening.Open("10.0.0.7", kStart).id;
  ASSERT_TRUE(opening.Open("10.0.0.7", kStart + 1ms).id);
  ASSERT_TRUE(opening.Open("10.0.0.8", kStart).id);
  Admission b = opening.Open("10.0.0.9", kStart + 10ms);
  ASSERT_EQ(b.reclaim.size(), 1u);
  EXPECT_EQ(b.reclaim[0].id, first);
}

// When every connection carries a request promptly or is being answered, the ceiling refuses
// the new one rather than reclaiming work; it admits again once one ends.
TEST(ConnectionBudgetTest, TheCeilingRefusesOnlyWhenEveryConnectionIsAtWork) {
  ConnectionBudget budget({.max_connections = 4, .max_idle_per_source = 100, .grace = 1s});
  std::vector<ConnectionId> busy;
  for (int i = 0; i < 4; ++i) {
    busy.push_back(OpenReady(budget, "a" + std::to_string(i), kStart));
    ASSERT_TRUE(budget.RequestStarted(busy.back(), kStart));
  }
  ASSERT_TRUE(budget.BodyRead(busy[0]));
  Admission refused = budget.Open("b", kStart + 500ms);  // three bodies still within the grace
  EXPECT_FALSE(refused.id.has_value());
  EXPECT_TRUE(refused.reclaim.empty());
  // A body still arriving after the grace is slow, and makes room.
  Admission slow_room = budget.Open("b", kStart + 2s);
  ASSERT_TRUE(slow_room.id.has_value());
  ASSERT_EQ(slow_room.reclaim.size(), 1u);
  EXPECT_NE(slow_room.reclaim[0].id, busy[0]) << "the one being answered is never taken";
  budget.Close(busy[0]);
  EXPECT_EQ(budget.sources(), 4u);  // a1..a3 (one reclaimed, not yet closed) and b
  budget.Close(12345);  // a stray close changes nothing
  EXPECT_EQ(budget.open(), 4);
}

}  // namespace
}  // namespace graintune::server
