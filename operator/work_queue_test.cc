// WorkQueue on a fake clock: de-duplication, one worker per key, delays, backoff, shutdown.
#include "operator/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/fake_clock.h"

namespace graintune::op {
namespace {

using namespace std::chrono_literals;

class WorkQueueTest : public ::testing::Test {
 protected:
  WorkQueueTest()
      : queue_({.backoff_initial = 1s, .backoff_max = 5s, .clock = &clock_}) {}
  FakeClock clock_;
  WorkQueue queue_;
  const TuningKey a_{"team-a", "llama"}, b_{"team-b", "gemma"};
};

TEST_F(WorkQueueTest, AKeyAddedManyTimesIsHandedOutOnce) {
  queue_.Add(a_);
  queue_.Add(b_);
  queue_.Add(a_);
  queue_.Add(a_);
  EXPECT_EQ(queue_.Depth().ready, 2u);
  EXPECT_EQ(queue_.TryGet(), a_);
  EXPECT_EQ(queue_.TryGet(), b_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

TEST_F(WorkQueueTest, AKeyBeingProcessedIsNotHandedToASecondWorkerAndItsReAddsCoalesce) {
  queue_.Add(a_);
  ASSERT_EQ(queue_.TryGet(), a_);
  queue_.Add(a_);  // events while a worker has it
  queue_.Add(a_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt) << "handed to a second worker while processing";
  EXPECT_EQ(queue_.Depth().processing, 1u);
  queue_.Done(a_);
  EXPECT_EQ(queue_.TryGet(), a_) << "the adds made while it was processed were lost";
  queue_.Done(a_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt) << "two adds while processing gave two reconciles";
}

TEST_F(WorkQueueTest, DoneWithoutAnAddMeanwhileDoesNotQueueTheKeyAgain) {
  queue_.Add(a_);
  ASSERT_EQ(queue_.TryGet(), a_);
  queue_.Done(a_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  EXPECT_EQ(queue_.Depth().processing, 0u);
}

TEST_F(WorkQueueTest, AddAfterQueuesTheKeyOnceItsDelayHasPassed) {
  queue_.AddAfter(a_, 5s);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  EXPECT_EQ(queue_.Depth().delayed, 1u);
  clock_.Advance(4999ms);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  clock_.Advance(1ms);
  EXPECT_EQ(queue_.TryGet(), a_);
  EXPECT_EQ(queue_.Depth().delayed, 0u);
}

TEST_F(WorkQueueTest, OfSeveralDelaysForOneKeyTheEarliestWinsAndTheyDoNotPileUp) {
  queue_.AddAfter(a_, 10s);
  queue_.AddAfter(a_, 3s);
  queue_.AddAfter(a_, 7s);
  EXPECT_EQ(queue_.Depth().delayed, 1u);
  clock_.Advance(3s);
  ASSERT_EQ(queue_.TryGet(), a_);
  queue_.Done(a_);
  clock_.Advance(1h);
  EXPECT_EQ(queue_.TryGet(), std::nullopt) << "a later delay of the same key fired as well";
}

TEST_F(WorkQueueTest, ADelayedKeyAlreadyQueuedIsHandedOutOnce) {
  queue_.AddAfter(a_, 1s);
  queue_.Add(a_);
  clock_.Advance(1s);
  EXPECT_EQ(queue_.TryGet(), a_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

TEST_F(WorkQueueTest, AddRateLimitedBacksOffExponentiallyUpToTheCapUntilForget) {
  auto due_after = [&](std::chrono::milliseconds expected) {
    queue_.AddRateLimited(a_);
    clock_.Advance(expected - 1ms);
    EXPECT_EQ(queue_.TryGet(), std::nullopt) << "due before " << expected.count() << " ms";
    clock_.Advance(1ms);
    std::optional<TuningKey> got = queue_.TryGet();
    EXPECT_EQ(got, a_) << "not due after " << expected.count() << " ms";
    if (got) queue_.Done(*got);
  };
  due_after(1s);
  due_after(2s);
  due_after(4s);
  due_after(5s);  // the cap
  due_after(5s);
  EXPECT_EQ(queue_.Requeues(a_), 5);
  EXPECT_EQ(queue_.Requeues(b_), 0);
  queue_.Forget(a_);
  EXPECT_EQ(queue_.Requeues(a_), 0);
  due_after(1s);
}

TEST_F(WorkQueueTest, AnEventDuringBackoffIsReconciledAtOnce) {
  queue_.AddRateLimited(a_);
  queue_.Add(a_);  // the key's pod changed
  EXPECT_EQ(queue_.TryGet(), a_);
}

TEST_F(WorkQueueTest, RateLimitedHoldsUntilTheDelayPassesAndTheDelayedEntryBringsTheKeyBack) {
  EXPECT_EQ(queue_.RateLimitedFor(a_), 0ms);
  queue_.AddRateLimited(a_);  // 1 s
  queue_.Add(a_);             // an event meanwhile: handed out, and told it is still held
  ASSERT_EQ(queue_.TryGet(), a_);
  EXPECT_EQ(queue_.RateLimitedFor(a_), 1s);
  EXPECT_EQ(queue_.RateLimitedFor(b_), 0ms);
  queue_.Done(a_);
  clock_.Advance(999ms);
  EXPECT_EQ(queue_.RateLimitedFor(a_), 1ms);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  clock_.Advance(1ms);
  EXPECT_EQ(queue_.RateLimitedFor(a_), 0ms);
  EXPECT_EQ(queue_.TryGet(), a_);
  queue_.Done(a_);
  queue_.AddRateLimited(a_);  // 2 s, until Forget
  EXPECT_EQ(queue_.RateLimitedFor(a_), 2s);
  queue_.Forget(a_);
  EXPECT_EQ(queue_.RateLimitedFor(a_), 0ms);
}

TEST_F(WorkQueueTest, ShutDownWakesABlockedGetAndDropsLaterAdds) {
  std::optional<TuningKey> got = b_;
  std::jthread worker([&] { got = queue_.Get({}); });
  queue_.ShutDown();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
  queue_.Add(a_);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

TEST_F(WorkQueueTest, ABlockedGetReturnsTheKeyAnotherThreadAdds) {
  std::optional<TuningKey> got;
  std::jthread worker([&] { got = queue_.Get({}); });
  queue_.Add(a_);
  worker.join();
  EXPECT_EQ(got, a_);
}

TEST_F(WorkQueueTest, AStopRequestEndsABlockedGet) {
  std::stop_source stop;
  std::optional<TuningKey> got = b_;
  std::jthread worker([&] { got = queue_.Get(stop.get_token()); });
  stop.request_stop();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(WorkQueueRealClockTest, ABlockedGetWakesWhenTheDelayPasses) {
  WorkQueue queue;
  queue.AddAfter({"ns", "k"}, 20ms);
  EXPECT_EQ(queue.Get({}), (TuningKey{"ns", "k"}));
}

}  // namespace
}  // namespace graintune::op
