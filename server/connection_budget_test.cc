#include "server/connection_budget.h"

#include <gtest/gtest.h>

namespace graintune::server {
namespace {

TEST(ConnectionBudgetTest, NoAddressTakesMoreThanItsShare) {
  ConnectionBudget budget({.max_connections = 100, .max_per_source = 10, .reserved = 20, .reserved_per_source = 2});
  int admitted = 0;
  for (int i = 0; i < 50; ++i) admitted += budget.TryAdmit("10.0.0.7");
  EXPECT_EQ(admitted, 10);
  EXPECT_TRUE(budget.TryAdmit("10.0.0.1"));
  EXPECT_EQ(budget.open(), 11);
  EXPECT_EQ(budget.open_from("10.0.0.7"), 10);
}

TEST(ConnectionBudgetTest, TheLastSlotsGoToAddressesHoldingFew) {
  ConnectionBudget budget({.max_connections = 100, .max_per_source = 10, .reserved = 20, .reserved_per_source = 2});
  // Eight crowding addresses fill the unreserved 80 slots.
  for (int a = 0; a < 8; ++a)
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(budget.TryAdmit("crowd-" + std::to_string(a)));
  // A ninth crowding address gets the reserved share an address may hold, no more.
  EXPECT_TRUE(budget.TryAdmit("crowd-8"));
  EXPECT_TRUE(budget.TryAdmit("crowd-8"));
  EXPECT_FALSE(budget.TryAdmit("crowd-8"));
  // The API server's addresses still get in.
  for (const char* apiserver : {"172.16.0.2", "172.16.0.3", "172.16.0.4"}) {
    EXPECT_TRUE(budget.TryAdmit(apiserver));
    EXPECT_TRUE(budget.TryAdmit(apiserver));
  }
  EXPECT_EQ(budget.open(), 88);
}

TEST(ConnectionBudgetTest, TheTotalIsNeverExceededAndReleasesFreeSlots) {
  ConnectionBudget budget({.max_connections = 4, .max_per_source = 4, .reserved = 0, .reserved_per_source = 0});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(budget.TryAdmit("a" + std::to_string(i)));
  EXPECT_FALSE(budget.TryAdmit("b"));
  budget.Release("a0");
  EXPECT_EQ(budget.sources(), 3u);
  EXPECT_TRUE(budget.TryAdmit("b"));
  budget.Release("never-admitted");  // a stray release changes nothing
  EXPECT_EQ(budget.open(), 4);
}

}  // namespace
}  // namespace graintune::server
