// WorkBudget: how much one admission request may cost the webhook before graintune stops
// looking at it and allows it unchanged (with a warning and the metric
// graintune_webhook_over_budget_total{budget}).
//
// Every step of an admission is linear in what it reads, and the body is capped (3 MiB), so
// the budget is not what keeps a request finite; it keeps a hostile one cheap, and bounds what
// one request can hold while other admissions wait behind it on the same I/O thread:
//   values  JSON values in the request: parsing stops at the first one past this, so the rest of
//           the tree is never built (a 3 MiB body of "{}," is ~1M values, ~100 bytes each once parsed);
//   sites   grain_worker_count sites in one object (a real MaxText job has one or two);
//   time    wall time from the request's arrival to the planner's last step.
// Real objects come nowhere near any of them: a JobSet of 64 replicatedJobs is a few thousand
// values and a handful of sites, planned in a fraction of a millisecond.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace graintune::webhook {

struct WorkLimits {
  size_t max_json_values = 100'000;
  int max_sites = 1'000;
  std::chrono::milliseconds max_time{1'000};
};

class WorkBudget {
 public:
  using Clock = std::chrono::steady_clock;

  WorkBudget(WorkLimits limits, Clock::time_point start)
      : limits_(limits), deadline_(start + limits.max_time) {}

  // Counts `sites` more sites and checks the clock; false once either is past its limit (and
  // from then on), exceeded() naming which.
  bool Charge(int sites) {
    if (!exceeded_.empty()) return false;
    sites_ += sites;
    if (sites_ > limits_.max_sites) exceeded_ = "sites";
    else if (Clock::now() > deadline_) exceeded_ = "time";
    return exceeded_.empty();
  }

  // "" while within budget, else "sites" or "time".
  const std::string& exceeded() const { return exceeded_; }

  // The warning for an exceeded budget, for the AdmissionReview.
  std::string Warning() const {
    const std::string what =
        exceeded_ == "sites"
            ? "more than " + std::to_string(limits_.max_sites) + " grain_worker_count sites"
            : "more than " + std::to_string(limits_.max_time.count()) + " ms of work";
    return "graintune: this object needs " + what +
           " to tune, over the webhook's per-request budget; allowed unchanged";
  }

  const WorkLimits& limits() const { return limits_; }

 private:
  WorkLimits limits_;
  Clock::time_point deadline_;
  int sites_ = 0;
  std::string exceeded_;
};

}  // namespace graintune::webhook
