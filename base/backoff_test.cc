#include "base/backoff.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

using namespace std::chrono_literals;

TEST(BackoffTest, DoublesFromInitialUpToMaxAndStartsAgainAfterReset) {
  Backoff b(BackoffPolicy{.initial = 1s, .max = 5s, .jitter = false});
  for (const std::chrono::milliseconds expected : {1000ms, 2000ms, 4000ms, 5000ms, 5000ms})
    EXPECT_EQ(b.Next(), expected);
  EXPECT_EQ(b.failures(), 5);
  b.Reset();
  EXPECT_EQ(b.failures(), 0);
  EXPECT_EQ(b.Next(), 1000ms);
}

TEST(BackoffTest, JitterDrawsFromTheUpperHalfOfEachDelay) {
  Backoff b(200ms, 1600ms);  // jitter on
  for (const long long ceiling : {200, 400, 800, 1600, 1600}) {
    const long long d = b.Next().count();
    EXPECT_GE(d, ceiling / 2);
    EXPECT_LE(d, ceiling);
  }
}

TEST(BackoffTest, ManyFailuresStayAtMaxWithoutOverflow) {
  const BackoffPolicy p{.initial = 500ms, .max = 5min, .jitter = false};
  EXPECT_EQ(BackoffDelay(p, 0), 500ms);
  EXPECT_EQ(BackoffDelay(p, 1), 500ms);
  EXPECT_EQ(BackoffDelay(p, 3), 2000ms);
  EXPECT_EQ(BackoffDelay(p, 1000000), 5min);
  Backoff b(p);
  for (int i = 0; i < 100; ++i) b.Next();
  EXPECT_EQ(b.Next(), 5min);
}

TEST(JitteredTest, AddsUpToItsSpreadAndNothingWithoutOne) {
  using std::chrono::milliseconds;
  bool varied = false;
  for (int i = 0; i < 200; ++i) {
    const milliseconds d = Jittered(milliseconds(2000), 0.2);
    EXPECT_GE(d, milliseconds(2000));
    EXPECT_LE(d, milliseconds(2400));
    varied = varied || d != milliseconds(2000);
  }
  EXPECT_TRUE(varied);  // 200 draws all at 0 would mean no jitter (chance 1 in 401^200)
  EXPECT_EQ(Jittered(milliseconds(2000), 0), milliseconds(2000));
  EXPECT_EQ(Jittered(milliseconds(0), 0.2), milliseconds(0));
}

}  // namespace
}  // namespace graintune
