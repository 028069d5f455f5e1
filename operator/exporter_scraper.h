// ExporterScraper: reads the exporters' /steps in the background for the reconcile workers, so
// that a reconcile never waits on an exporter and a slow or unreachable one delays no other key.
//
// A reconcile asks Latest(key, pod) and gets at once the steps last read from that pod's
// exporter (nullopt before the first success). When those are older than `fresh_for`, Latest
// also queues a scrape, unless one is queued or running already or the exporter is backing off.
// A scrape that brings steps the pod had not shown before calls on_scraped(key), and the key is
// reconciled again with them; a scrape that brings nothing new, or fails, calls nothing.
//
// Bounds, all part of the design:
//  - At most `concurrency` scrapes at once, on that many threads. Exporters whose last scrape
//    failed (suspects: blackholed, answering late) take at most half of them, so healthy ones
//    always have the other half.
//  - Each scrape within `timeout` to connect and for the answer to start, then `timeout`
//    between reads of its body, which is capped at `max_bytes`.
//  - After n failures in a row an exporter is not scraped for backoff_initial * 2^(n-1), at
//    most backoff_max (its Backoff, base/backoff.h, without jitter); a success resets it. One that never answered yet waits backoff_initial
//    each time (it is most likely still starting; the suspect slots bound what it costs).
//  - One entry per pod (by uid), dropped by Forget(uid) when the pod is deleted.
//
// Errors: a failed scrape leaves the last good steps in place (a restarted exporter or a
// network blip loses nothing already read) and is counted and logged, never thrown.
// Thread-safety: every method may be called from any thread. The destructor cancels scrapes in
// flight (through their stop token) and joins its threads; on_scraped is never called after it
// returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/backoff.h"
#include "base/clock.h"
#include "base/status.h"
#include "operator/pod_facts.h"
#include "telemetry/step_log.h"
#include "operator/tuning_key.h"

namespace graintune::op {

struct ScraperOptions {
  int concurrency = 8;
  std::chrono::milliseconds timeout{3000};
  size_t max_bytes = 8u << 20;
  std::chrono::milliseconds fresh_for{5000};
  std::chrono::milliseconds backoff_initial{5000};
  std::chrono::milliseconds backoff_max{std::chrono::minutes(5)};
  const graintune::Clock* clock = &RealClock();  // never null
  // Called after every scrape with its duration and whether it succeeded (metrics).
  std::function<void(std::chrono::duration<double> took, bool ok)> observe;
  // Called by FetchExporterSteps when an exporter answered and its answer was refused (not a
  // steps document, a figure out of bounds, steps out of order, another pod's uid), with why.
  std::function<void(const PodFacts& pod, const std::string& reason)> on_rejected;
};

// Reads one exporter's /steps; the stop token cancels it. Errors are values.
using StepsFetch = std::function<Result<telemetry::StepsDocument>(const PodFacts& pod,
                                                       const ScraperOptions& options,
                                                       std::stop_token stop)>;

// The real fetch: GET http://POD_IP:EXPORTER_PORT/steps, parsed and checked
// (ParseStepsDocument); an exporter that reports another pod's uid (the address was reused, or a
// pod speaking for another) is an error. The answer is only ever filed under `pod` (by uid, in
// its own tuning key): no answer can reach another workload's GrainTuning. A refused answer is
// reported to options.on_rejected.
Result<telemetry::StepsDocument> FetchExporterSteps(const PodFacts& pod, const ScraperOptions& options,
                                         std::stop_token stop);

struct ScraperFigures {
  long scrapes = 0, failures = 0;
  int in_flight = 0;     // started, their answers not yet recorded
  int backing_off = 0;   // exporters whose last scrape failed
};

class ExporterScraper {
 public:
  ExporterScraper(ScraperOptions options, StepsFetch fetch,
                  std::function<void(const TuningKey&)> on_scraped);
  ~ExporterScraper();
  ExporterScraper(const ExporterScraper&) = delete;
  ExporterScraper& operator=(const ExporterScraper&) = delete;

  std::optional<telemetry::StepsDocument> Latest(const TuningKey& key, const PodFacts& pod);
  // What is known of a pod's exporter, without queuing a read: steps were read from it (kept
  // also while a later scrape fails), its scrapes have only failed so far, or nothing yet (never
  // asked, or its first scrape still queued or running).
  enum class Known { kNothing, kRead, kFailing };
  Known KnownOf(const std::string& pod_uid) const;
  // The steps last read from the pod's exporter, without queuing a read: for a pod that stopped
  // running (its exporter is gone or going), whose last read steps are its attempt's final
  // record. nullopt when none was read or the pod was forgotten.
  std::optional<telemetry::StepsDocument> Peek(const std::string& pod_uid) const;
  void Forget(const std::string& pod_uid);
  ScraperFigures Figures() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Exporter {
    TuningKey key;
    PodFacts pod;
    std::optional<telemetry::StepsDocument> steps;
    Clock::time_point read_at{};  // of `steps`
    bool queued = false;          // waiting for a thread or running
    Backoff backoff{BackoffPolicy{.jitter = false}};  // its failures in a row
    Clock::time_point retry_at{};
  };

  Clock::time_point Now() const;
  void Work(std::stop_token stop);
  // The next pod uid to scrape, or nullopt when none may start now. Caller holds mu_.
  std::optional<std::string> NextLocked();
  // Ends one read: it leaves the in-flight counts and, unless the scraper is stopping
  // (record false), its answer is recorded.
  void Finish(const std::string& uid, Result<telemetry::StepsDocument> result, Clock::duration took,
              bool suspect, bool record);

  const ScraperOptions options_;
  const StepsFetch fetch_;
  const std::function<void(const TuningKey&)> on_scraped_;
  const int suspect_slots_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::map<std::string, Exporter> exporters_;  // pod uid -> exporter
  std::deque<std::string> healthy_, suspect_;  // queued uids
  int running_ = 0, running_suspect_ = 0;
  long scrapes_ = 0, failures_ = 0;
  std::vector<std::jthread> threads_;  // last: stopped and joined first
};

}  // namespace graintune::op
