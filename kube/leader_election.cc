#include "kube/leader_election.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/backoff.h"
#include "base/rfc3339.h"
#include "kube/backoff.h"

namespace graintune::kube {
namespace {

// A stop token that fires when `parent` does or when `deadline` passes, whichever is first.
// A renewal's requests carry it, so an API server that hangs (etcd gone, a request held open)
// cannot keep a leader leading past its renew deadline: the request is cancelled instead. The
// deadline is read on the elector's clock; waiting for it is this thread's own sleep, which
// only the real clock can give (base/clock.h).
class StopAtDeadline {
 public:
  StopAtDeadline(std::stop_token parent, std::chrono::steady_clock::time_point deadline)
      : forward_(parent, [this] { source_.request_stop(); }),
        timer_([this, deadline](std::stop_token own) {
          std::mutex mu;
          std::condition_variable_any cv;
          std::unique_lock<std::mutex> lock(mu);
          if (!cv.wait_until(lock, own, deadline, [] { return false; }) && !own.stop_requested())
            source_.request_stop();
        }) {}
  std::stop_token token() const { return source_.get_token(); }

 private:
  std::stop_source source_;
  std::stop_callback<std::function<void()>> forward_;
  std::jthread timer_;  // last: joined first, before the source it writes is destroyed
};

}  // namespace

Status ValidateLeaderElection(const LeaderElectionConfig& c) {
  if (c.lease_name.empty() || c.lease_namespace.empty())
    return Status::Error("leader election needs a lease namespace and name");
  if (c.identity.empty()) return Status::Error("leader election needs an identity");
  if (c.retry_period.count() <= 0 || c.renew_deadline <= c.retry_period ||
      c.lease_duration <= c.renew_deadline)
    return Status::Error(
        "leader election needs lease duration > renew deadline > retry period > 0");
  return Status::Ok();
}

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, const Clock& clock)
    : client_(std::move(client)), config_(std::move(config)), callbacks_(std::move(callbacks)),
      clock_(clock) {}

bool LeaderElector::TryAcquireOrRenew(std::stop_token stop) {
  const std::string now = FormatRfc3339Micros(clock_.WallNow());
  const int duration_s = static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  Json spec = {{"holderIdentity", config_.identity},
               {"leaseDurationSeconds", std::max(1, duration_s)},
               {"renewTime", now}};
  ApiResult<Json> lease =
      client_->Get(resources::kLeases, config_.lease_namespace, config_.lease_name, stop);
  if (!lease.ok()) {
    if (!lease.error().IsNotFound()) return false;
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = 0;
    Json obj = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
                {"spec", spec}};
    ApiResult<Json> created = client_->Create(resources::kLeases, config_.lease_namespace, obj, stop);
    if (!created.ok()) return false;
    observed_holder_ = config_.identity;
    observed_renew_time_ = now;
    observed_at_ = clock_.SteadyNow();
    return true;
  }
  Json current = *lease;
  const Json old_spec = current.value("spec", Json::object());
  const std::string holder = old_spec.value("holderIdentity", "");
  const std::string renew = old_spec.value("renewTime", "");
  if (holder != observed_holder_ || renew != observed_renew_time_) {
    observed_holder_ = holder;
    observed_renew_time_ = renew;
    observed_at_ = clock_.SteadyNow();
    if (callbacks_.on_new_leader && holder != config_.identity && !holder.empty())
      callbacks_.on_new_leader(holder);
  }
  const int held_for_s = old_spec.value("leaseDurationSeconds", duration_s);
  const bool expired = clock_.SteadyNow() >
                       observed_at_ + std::chrono::seconds(held_for_s);
  if (!holder.empty() && holder != config_.identity && !expired) return false;

  if (holder == config_.identity) {
    spec["acquireTime"] = old_spec.value("acquireTime", now);
    spec["leaseTransitions"] = old_spec.value("leaseTransitions", 0);
  } else {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = old_spec.value("leaseTransitions", 0) + 1;
  }
  current["spec"] = spec;
  // A conditional PUT: if another candidate wrote first, ours gets 409 and loses the race.
  ApiResult<Json> written = client_->Replace(resources::kLeases, config_.lease_namespace, current,
                                             "", stop);
  if (!written.ok()) return false;
  observed_holder_ = config_.identity;
  observed_renew_time_ = now;
  observed_at_ = clock_.SteadyNow();
  return true;
}

void LeaderElector::Release() {
  // Empty holder and a one-second duration: the next candidate takes over at its next try.
  // Bounded by the renew deadline: a hung API server must not hold up shutdown; a successor
  // then waits out the lease instead.
  StopAtDeadline bounded({}, clock_.SteadyNow() + config_.renew_deadline);
  UpdateWithRetry(*client_, resources::kLeases, config_.lease_namespace, config_.lease_name, "",
                  [this](Json& lease) {
                    if (lease.value("spec", Json::object()).value("holderIdentity", "") !=
                        config_.identity)
                      return false;
                    lease["spec"]["holderIdentity"] = "";
                    lease["spec"]["leaseDurationSeconds"] = 1;
                    lease["spec"]["renewTime"] = FormatRfc3339Micros(clock_.WallNow());
                    return true;
                  },
                  3, bounded.token());
}

void LeaderElector::Run(std::stop_token stop) {
  // Acquire: try every retry period (jittered) until we hold the lease.
  while (!stop.stop_requested()) {
    while (!stop.stop_requested() && !TryAcquireOrRenew(stop)) {
      SleepFor(Jittered(config_.retry_period, 0.2), stop);
    }
    if (stop.stop_requested()) {
      // The stop may have cut off the answer to a write that landed: release in case it did
      // (Release changes nothing unless the Lease names us).
      Release();
      break;
    }
    leading_ = true;
    if (callbacks_.on_started_leading) callbacks_.on_started_leading();
    // Renew: every retry period; give up when no renewal succeeded within the renew deadline.
    // A renewal's requests are cancelled at that deadline, so a hung API server ends the lead
    // on time rather than after the client's request timeout (which can exceed the lease).
    Clock::SteadyTime last_renew = clock_.SteadyNow();
    while (!stop.stop_requested()) {
      if (!SleepFor(config_.retry_period, stop)) break;
      const auto deadline = last_renew + config_.renew_deadline;
      bool renewed = false;
      {
        StopAtDeadline bounded(stop, deadline);
        renewed = TryAcquireOrRenew(bounded.token());
      }
      if (renewed) {
        last_renew = clock_.SteadyNow();
      } else if (clock_.SteadyNow() >= deadline) {
        break;
      }
    }
    leading_ = false;
    if (stop.stop_requested()) Release();
    if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
  }
}

}  // namespace graintune::kube
