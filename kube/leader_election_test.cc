// The elector's renew loop over an in-memory API server whose answers can be held open, as a
// kube-apiserver holds a request while etcd is gone. Its behaviour against a real API server
// (two candidates, a SIGKILLed holder) is tested in tests/integration.
#include "kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "kube/fake_api_server.h"

namespace graintune::kube {
namespace {

// Passes requests to a FakeApiServer until Hang(); from then on every request is held until
// its caller cancels it, and never answered.
class HangingTransport : public HttpTransport {
 public:
  explicit HangingTransport(std::shared_ptr<FakeApiServer> api) : api_(std::move(api)) {}
  void Hang() { hanging_ = true; }
  int held() const { return held_; }

  ApiResult<HttpResponse> Send(const HttpRequest& request, std::stop_token stop) override {
    if (!hanging_) return api_->Send(request, stop);
    ++held_;
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, stop, [] { return false; });
    return ApiError{0, "Cancelled", "stopped"};
  }
  ApiResult<HttpResponse> Stream(const HttpRequest& request,
                                 const std::function<bool(std::string_view)>& on_chunk,
                                 std::stop_token stop) override {
    return api_->Stream(request, on_chunk, stop);
  }

 private:
  std::shared_ptr<FakeApiServer> api_;
  std::atomic<bool> hanging_{false};
  std::atomic<int> held_{0};
};

// Waits (bounded) for `done`; a condition, not a timing claim.
bool WaitUntil(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(LeaderElectionTest, ARenewalHeldOpenByTheApiServerEndsTheLeadAtTheRenewDeadline) {
  auto api = std::make_shared<FakeApiServer>();
  auto transport = std::make_shared<HangingTransport>(api);
  // The client would wait an hour for an answer: only the renew deadline can end the renewal.
  auto client = std::make_shared<Client>(transport, ClientOptions{.request_timeout = std::chrono::hours(1)});
  std::atomic<bool> started{false}, stopped{false};
  LeaderElector elector(client,
                        {.lease_namespace = "ns", .lease_name = "lease", .identity = "me",
                         .lease_duration = std::chrono::milliseconds(1500),
                         .renew_deadline = std::chrono::milliseconds(600),
                         .retry_period = std::chrono::milliseconds(100)},
                        {.on_started_leading = [&] { started = true; },
                         .on_stopped_leading = [&] { stopped = true; }});
  std::stop_source stop;
  std::thread run([&] { elector.Run(stop.get_token()); });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }));
  EXPECT_TRUE(elector.IsLeader());

  transport->Hang();
  const bool ended = WaitUntil([&] { return stopped.load(); });
  EXPECT_TRUE(ended) << "a renewal held open kept the elector leading";
  EXPECT_FALSE(elector.IsLeader());
  EXPECT_GE(transport->held(), 1);

  stop.request_stop();
  run.join();
}

TEST(LeaderElectionTest, ALeaderKeepsLeadingWhileRenewalsAreAnswered) {
  auto api = std::make_shared<FakeApiServer>();
  std::atomic<bool> started{false}, stopped{false};
  LeaderElector elector(api->NewClient(),
                        {.lease_namespace = "ns", .lease_name = "lease", .identity = "me",
                         .lease_duration = std::chrono::milliseconds(1500),
                         .renew_deadline = std::chrono::milliseconds(600),
                         .retry_period = std::chrono::milliseconds(100)},
                        {.on_started_leading = [&] { started = true; },
                         .on_stopped_leading = [&] { stopped = true; }});
  std::stop_source stop;
  std::thread run([&] { elector.Run(stop.get_token()); });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }));
  // Several renewals, each a GET and a PUT of the Lease, while it stays the leader.
  ASSERT_TRUE(WaitUntil([&] { return api->Count("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lease") >= 5; }));
  EXPECT_FALSE(stopped.load());
  EXPECT_TRUE(elector.IsLeader());
  stop.request_stop();
  run.join();
  // Giving up at shutdown releases the Lease: an empty holder.
  auto lease = api->Get(resources::kLeases, "ns", "lease");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "");
}

}  // namespace
}  // namespace graintune::kube
