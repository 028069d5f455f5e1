// Lease-based leader election (coordination.k8s.io/v1), as client-go does it: one Lease names
// the holder; the holder renews it every retry period; a candidate takes it over when the
// holder has not renewed for a whole lease duration, judged by the candidate's own clock from
// when it last saw the record change (so clock skew between hosts does not matter).
//
// Contract: Run() blocks until stop is requested. on_started_leading runs on Run's thread's
// helper when leadership is gained; on_stopped_leading when it is lost (a renewal failed for
// renew_deadline) or given up at shutdown. A leader that stops releases the Lease (empty holder)
// so a successor need not wait out the duration.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "base/clock.h"
#include "kube/client.h"

namespace graintune::kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate, e.g. the pod name
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // optional
};

// Checks durations are positive and lease_duration > renew_deadline > retry_period.
Status ValidateLeaderElection(const LeaderElectionConfig& config);

class LeaderElector {
 public:
  // `clock` gives the Lease's times (wall) and judges its expiry (steady).
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                LeaderCallbacks callbacks, const Clock& clock = RealClock());
  void Run(std::stop_token stop);
  bool IsLeader() const { return leading_.load(); }

 private:
  // One attempt to acquire or renew; true when we hold the lease afterwards.
  bool TryAcquireOrRenew(std::stop_token stop);
  // Gives the Lease up (if it names us), within the renew deadline.
  void Release();

  std::shared_ptr<Client> client_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  const Clock& clock_;
  std::atomic<bool> leading_{false};
  // What we last saw of the Lease, and when (our monotonic clock).
  std::string observed_holder_;
  std::string observed_renew_time_;
  std::chrono::steady_clock::time_point observed_at_{};
};

}  // namespace graintune::kube
