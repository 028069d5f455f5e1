#include "bench/scale/scale_phases.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "bench/scale/admission_burst.h"
#include "bench/scale/api_audit.h"
#include "operator/tuning_reconciler.h"
#include "tests/controlplane/wait_for.h"

namespace graintune::bench {

using Clock = std::chrono::steady_clock;

void ScalePhases::Say(const std::string& text) const {
  std::fprintf(stderr, "scale_bench: %s\n", text.c_str());
}

bool ScalePhases::WaitFor(const std::function<bool()>& done, int seconds) const {
  return testing::WaitFor(done, std::chrono::seconds(seconds), &interrupted);
}

bool ScalePhases::Pause(int seconds) const {
  return !WaitFor([] { return false; }, seconds) && !interrupted;
}

Status ScalePhases::MeasureAttempt(int attempt, bool bad, PhaseFigures& into) {
  const int want = shape.workloads();
  // KWOK plays pod stages 4 at a time and retries deletes of pods the garbage collector took
  // first: a restart of 2,148 pods has taken over 11 min on 2 cores (about 1.5-6 pods/s).
  const int limit = 120 + shape.pods() / 2;
  // A Job retry numbered as the attempt it replaces never runs `attempt`: counted, not awaited.
  std::set<std::string> renumbered;
  if (!WaitFor([&] {
        if (tracker.WorkloadsRunning(attempt) == want) return true;
        renumbered = tracker.RetriesNumberedAsBefore(attempt);
        return tracker.WorkloadsRunning(attempt) + static_cast<int>(renumbered.size()) == want;
      }, limit)) {
    std::string not_running;
    for (const std::string& w : tracker.WorkloadsNotRunning(attempt)) not_running += "\n  " + w;
    return Status::Error("attempt " + std::to_string(attempt) + ": " +
                         std::to_string(tracker.WorkloadsRunning(attempt)) + " of " +
                         std::to_string(want) + " workloads running after " +
                         std::to_string(limit) + " s; not running:" + not_running + SchedulingPicture(cp));
  }
  into.retries_numbered_as_before += static_cast<int>(renumbered.size());
  std::string renumbered_names;
  for (const std::string& k : renumbered) renumbered_names += " " + k;
  Say("attempt " + std::to_string(attempt) + ": " + std::to_string(want - static_cast<int>(renumbered.size())) +
      " workloads running" +
      (renumbered.empty() ? std::string()
                          : " (" + std::to_string(renumbered.size()) +
                                " Job retries numbered as the attempt they replace:" + renumbered_names + ")") +
      "; waiting for recommendations");
  // A trial's steady samples are the later half (rounded up) of the steps after warm-up
  // (SummarizeSteps), so min_samples of them exist once warmup + 2 x min_samples - 1 steps
  // do (the stand-in shows step n after n step intervals).
  const int needed = op::ReconcileInput{}.warmup_steps + 2 * op::ReconcileInput{}.min_samples - 1;
  std::vector<std::pair<std::string, Clock::time_point>> expected;  // key, data time
  for (const auto& [key, pods] : WorkloadsOf(shape)) {
    // A single-host workload whose one exporter is bad never has data.
    if (bad && pods == 1 && WorkloadTracker::BadIndex(std::atoi(key.c_str() + key.rfind('-') + 1))) {
      ++into.workloads_without_data;
      continue;
    }
    std::optional<SteadyTime> start = standin.AttemptStart(key, attempt);
    if (start) expected.emplace_back(key, *start + needed * step_interval);
  }
  Clock::time_point last_data{};
  for (const auto& e : expected) last_data = std::max(last_data, e.second);
  WaitFor([&] {
    return Clock::now() > last_data + std::chrono::seconds(timeout_s) ||
           std::all_of(expected.begin(), expected.end(), [&](const auto& e) {
             return tracker.RecommendedAt(e.first, attempt + 1).has_value();
           });
  }, timeout_s + static_cast<int>(needed * step_interval.count() / 1000) + 60);
  for (const auto& [key, data_at] : expected) {
    std::optional<SteadyTime> at = tracker.RecommendedAt(key, attempt + 1);
    if (!at) {
      ++into.recommendations_missing;
      continue;
    }
    into.recommendation_latency_s.push_back(std::chrono::duration<double>(*at - data_at).count());
  }
  Say("attempt " + std::to_string(attempt) + ": " + std::to_string(into.recommendation_latency_s.size()) +
      " recommendations, " + std::to_string(into.recommendations_missing) + " missing; latency p50 " +
      std::to_string(Quantile(into.recommendation_latency_s, 0.5)) + " s, max " +
      std::to_string(Quantile(into.recommendation_latency_s, 1.0)) + " s");
  return Status::Ok();
}

Status ScalePhases::Restart(int attempt) {
  Say("restarting every workload (attempt " + std::to_string(attempt) + ")");
  return FailOnePodOfEach(cp, tracker.OneRunningPodPerWorkload());
}

Result<WindowFigures> ScalePhases::Window(int seconds) {
  const pid_t pid = install.operator_process().pid();
  const auto from = Clock::now();
  const auto from_wall = std::chrono::system_clock::now();
  const std::optional<double> cpu0 = CpuSeconds(pid);
  if (!Pause(seconds)) return Status::Error("interrupted");
  const std::optional<double> cpu1 = CpuSeconds(pid);
  const auto to = Clock::now();
  const auto to_wall = std::chrono::system_clock::now();
  if (!cpu0 || !cpu1) return Status::Error("graintune-operator is gone:\n" +
                                           testing::TailOfFile(install.operator_process().log_path()));
  WindowFigures w;
  w.seconds = std::chrono::duration<double>(to - from).count();
  w.operator_cpu_cores = (*cpu1 - *cpu0) / w.seconds;
  w.operator_rss_mib = PeakRssMib(pid);
  Result<RequestCounts> counts = CountRequests(audit_log, install.operator_user(), from_wall, to_wall);
  if (!counts.ok()) return counts.status();
  for (const auto& [verb, n] : counts->by_verb) w.requests_per_minute[verb] = static_cast<double>(n) * 60 / w.seconds;
  w.requests_per_minute_total = static_cast<double>(counts->total) * 60 / w.seconds;
  const auto leases = counts->by_resource.find("leases");
  if (leases != counts->by_resource.end())
    w.lease_requests_per_minute = static_cast<double>(leases->second) * 60 / w.seconds;
  w.tuning_writes_per_minute = static_cast<double>(tracker.TuningUpdatesBetween(from, to)) * 60 / w.seconds;
  w.tuning_writes_per_minute_last_half =
      static_cast<double>(tracker.TuningUpdatesBetween(from + (to - from) / 2, to)) * 60 / (w.seconds / 2);
  std::vector<double> medians, all;
  for (const auto& [key, times] : standin.ScrapesByKey()) {
    std::vector<double> gaps;
    for (size_t i = 1; i < times.size(); ++i)
      if (times[i - 1] >= from && times[i] < to)
        gaps.push_back(std::chrono::duration<double>(times[i] - times[i - 1]).count());
    if (gaps.empty()) continue;
    medians.push_back(Quantile(gaps, 0.5));
    all.insert(all.end(), gaps.begin(), gaps.end());
  }
  w.pass_p50_s = Quantile(medians, 0.5);
  w.pass_max_s = Quantile(all, 1.0);
  return w;
}

}  // namespace graintune::bench
