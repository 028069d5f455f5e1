// The operator's reconciler, in controller-runtime's shape: a work queue of tuning keys fed by
// the informers' events (KeyEvents: pod, GrainTuning, policy and namespace changes), workers
// that take one key at a time, read that key's pods from the cache, take its exporters' last
// steps from the ExporterScraper (never waiting on an exporter), call ReconcileTuning() and
// write what changed (GrainTuning create, status with conflict retry, Events on the workload).
// A status equal to the stored one is not written. Runs only while this replica leads.
// Everything it learns is written to the API, so a restarted operator starts from there.
//
// Status is written when it changes; a change that is only progress (more steps of a trial
// already recorded) at most every progress_write_interval, so a running workload costs a
// write per interval, not one per scrape.
//
// When a key is looked at again:
//  - a pod, its GrainTuning, a policy or a namespace changed (an event queues it);
//  - its exporters brought new steps (the scraper queues it);
//  - it has a running attempt: after running_requeue, to read its steps again (the only
//    periodic work: a key whose attempts all ended costs nothing until an event);
//  - a retryable error (no answer, 409 after retries, 429, 5xx): after the work queue's
//    backoff (its one rate limiter), even if its pods change meanwhile, so one failing key
//    does not cost every event; a terminal error (403, 422, ...) is not retried: the key waits
//    for its next event;
//  - its GrainTuning has no pod left: after forget_after, to delete it (Forgettable()).
//
// Thread-safety: Process*() may be called from several threads (the queue hands a key to one
// worker at a time); EnqueueAll() and counters() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>

#include "kube/events.h"
#include "kube/informer.h"
#include "operator/exporter_scraper.h"
#include "operator/key_events.h"
#include "telemetry/step_log.h"
#include "operator/tuning_reconciler.h"
#include "workload/cluster_sources.h"
#include "workload/sources.h"

namespace graintune::op {

struct ControllerCaches {
  std::shared_ptr<kube::Informer> pods;  // label graintune.dev/managed=true
  std::shared_ptr<kube::Informer> graintunings;
  std::shared_ptr<kube::Informer> policies;
  std::shared_ptr<kube::Informer> namespaces;
  workload::TpuNodeCache nodes;  // workload::MakeTpuNodeCache
  // The ConfigMaps tuned pods mount, read by name when needed (workload::ConfigMapFetcher).
  std::shared_ptr<workload::ConfigMapSource> configmaps;

  // The operator's caches on `client`, their events feeding `keys`: tuned pods (label
  // graintune.dev/managed=true), GrainTunings, policies, Namespaces, TPU Nodes, and ConfigMaps
  // read by name. Every cache drops managedFields (nothing reads them; at thousands of pods they
  // are a large share of the operator's memory). Not started.
  static ControllerCaches ForClient(std::shared_ptr<kube::Client> client, KeyEvents& keys);

  bool Synced() const;
  void Start();
  void Stop();
};

// When to reconcile a key again; zero: only when an event queues it.
struct ReconcileResult {
  std::chrono::milliseconds requeue_after{0};
};

// Why a reconcile failed; terminal errors are not retried (the key waits for its next event).
struct ReconcileError {
  bool terminal = false;
  std::string message;
  Status ToStatus() const { return Status::Error(message); }
};

using ReconcileOutcome = Result<ReconcileResult, ReconcileError>;

// A failed API call while `doing` as a reconcile error: retryable when trying again later can help.
ReconcileError ReconcileErrorOf(const std::string& doing, const kube::ApiError& error);

struct ControllerOptions {
  // The exporters' /steps: at most scrape_concurrency at once (half of them at most for
  // exporters that failed last time), each within scrape_timeout, capped at max_scrape_bytes.
  std::chrono::milliseconds scrape_timeout{3000};
  size_t max_scrape_bytes = 8u << 20;
  int scrape_concurrency = 8;
  // An attempt none of whose exporters was read yet has this many of its pods' exporters asked
  // at a time (one answer is enough: a slice's hosts step in lockstep).
  int first_reads_per_attempt = 2;
  // Empty: FetchExporterSteps (HTTP); tests pass their own.
  StepsFetch fetch;
  int warmup_steps = 2;
  // GrainTunings without pods and without activity for this long are deleted (Forgettable());
  // 0 keeps them forever.
  std::chrono::seconds forget_after{0};
  // When set, trials come from this Prometheus (query API) instead of the exporters' /steps.
  std::shared_ptr<kube::Client> prometheus;
  // A key with a running attempt is reconciled again (its steps read again) this often.
  std::chrono::milliseconds running_requeue{5000};
  // A status change that is only progress (ProgressOnly(): more steps of a trial already
  // recorded) is written at most this often per key while all the key's pods are alive; it
  // waits and the key is queued for when it is due. Anything else, and any change once a pod is
  // ending (its attempt's last steps, read before its exporter goes), is written at once.
  // 0 writes every change.
  std::chrono::milliseconds progress_write_interval{30000};
  // The clock for requeues, backoff and the timestamps written (tests pass a FakeClock); also
  // the work queue's and the scraper's. Never null.
  const Clock* clock = &RealClock();
};

struct ControllerCounters {
  std::atomic<long> reconciles{0}, reconcile_errors{0}, scrapes{0}, scrape_errors{0},
      status_writes{0}, events{0}, forgotten{0},
      ended_early{0},        // attempts whose trainer exited 0 before its configured steps
      rejected_answers{0},   // exporter answers refused (ParseStepsDocument, another pod's uid)
      deferred{0},           // keys handed out but not reconciled: still backing off
      progress_deferred{0},  // progress-only status writes put off (progress_write_interval)
      status_reconciles{0},
      lap_answers{0};        // pods given their practice lap's answer  // ReconcileTuning() runs: one per reconcile, and one more per
                             // status write that met another object than it was computed from
                             // (a conflict's fresh read, or a create that lost the race)
};

class TuningController {
 public:
  // `keys` is the queue and pod index the caches' informers feed (their handlers from it).
  TuningController(std::shared_ptr<kube::Client> client, ControllerCaches caches,
                   std::shared_ptr<kube::EventRecorder> events, std::shared_ptr<KeyEvents> keys,
                   ControllerOptions options = {});
  ~TuningController();

  // Queues every key the caches know (pods and GrainTunings): on becoming the leader, when
  // events may have been missed.
  void EnqueueAll();
  // Reconciles keys as the queue hands them out until `stop`; while `may_run()` is false
  // (not the leader, caches not synced) it takes none.
  void Run(std::stop_token stop, const std::function<bool()>& may_run);
  // Reconciles the keys that are ready now, on the caller's thread (keys queued meanwhile wait
  // for the next call); how many were handed out.
  int ProcessReady();
  // Reconciles one key now (also when it is not queued), unless the queue still holds it back
  // after a retryable error. Errors are counted and logged: a retryable one goes back to the
  // queue rate-limited, a terminal one is not requeued.
  void Process(const TuningKey& key);

  const ControllerCounters& counters() const { return counters_; }
  ScraperFigures scraper_figures() const;
  WorkQueueDepth queue_depth() const { return keys_->queue().Depth(); }

 private:
  // One key: ReadReconcileInput, ReconcileTuning, WriteStatus, RecordEvents.
  ReconcileOutcome ReconcileKey(const TuningKey& key, const std::vector<IndexedPod>& pods);
  // reconcile_inputs.cc: the stored GrainTuning, the pods' facts, the decision inputs read from
  // the newest pod's spec and each attempt's steps; nullopt when the newest pod is gone from
  // the cache (its delete event queues the key again).
  std::optional<ReconcileInput> ReadReconcileInput(const TuningKey& key, const std::vector<IndexedPod>& pods);
  // status_write.cc: creates the GrainTuning when new and writes `out.status`; a conflict that
  // brings another object than `out` was reconciled from reconciles it again (a lagging cache
  // never overwrites newer data; `in` and `out` are updated to it). Progress-only changes within
  // progress_write_interval of the last write are deferred: `deferred` says when to come back.
  struct StatusWrite {
    bool wrote = false;
    std::optional<ReconcileResult> deferred;
  };
  Result<StatusWrite, ReconcileError> WriteStatus(const TuningKey& key, ReconcileInput& in,
                                                  ReconcileOutput& out);
  // status_write.cc: the Events on the workload people look at (the JobSet or Job), else on
  // the GrainTuning; failures are logged.
  void RecordEvents(const TuningKey& key, const ReconcileInput& in, const std::vector<EventToRecord>& events);
  // Writes a practice lap's answer on the pods waiting for it (graintune.dev/lap-value, which
  // their launchers read through the downward API); a pod gone meanwhile needs none.
  std::optional<ReconcileError> WriteLapAnswer(const TuningKey& key, const LapAnswerWrite& write);
  // For each attempt in `in` with running pods and not in `scraped`: the steps last read from
  // one of its pods' exporters, into in.steps (and `scraped`); when none was read yet, queues
  // first reads of at most options_.first_reads_per_attempt of its pods.
  void ReadRunningAttempts(const TuningKey& key, ReconcileInput& in, std::map<int, bool>& scraped);
  // Where a key stands between reconciles.
  struct KeyState {
    // When this replica last wrote the key's status; nullopt: not since it started.
    std::optional<std::chrono::steady_clock::time_point> last_status_write;
    // Refused exporter answers: attempt -> "pod: why", waiting for the key's next reconcile to
    // become a Warning Event; attempts already warned about (at most one Event per attempt).
    std::map<int, std::string> rejections_pending;
    std::set<int> rejections_reported;
  };
  // An exporter answer was refused (the scraper's on_rejected): remembered for a Warning Event,
  // once per attempt, and the key queued so it goes out.
  void NoteRejection(const PodFacts& pod, const std::string& reason);
  // The Warning Events waiting for `key`, each attempt's once.
  std::vector<EventToRecord> TakeRejectionEvents(const TuningKey& key);
  std::chrono::steady_clock::time_point Now() const;
  // Process() of a key none of whose pods is left.
  void ProcessWithoutPods(const TuningKey& key);
  // A key none of whose pods is left: marks its attempts ended, or deletes its GrainTuning once
  // Forgettable(); returns when to look again (after forget_after), zero for never, or the
  // error of a write (the key is then retried with backoff).
  Result<std::chrono::milliseconds> ReconcileWithoutPods(const TuningKey& key);
  // Tells the scraper to drop the key's exporters whose pods are not in `pods`. Caller holds
  // states_mu_.
  void ForgetGonePods(const TuningKey& key, const std::vector<IndexedPod>& pods);
  // A GrainTuning none of whose pods is left (all deleted: a Kueue preemption, a finished
  // or deleted workload): its measured attempts have ended.
  Status MarkAttemptsEnded(const nlohmann::json& grain_tuning);
  // Deletes a Forgettable() GrainTuning (uid precondition).
  Status Forget(const nlohmann::json& grain_tuning);

  std::shared_ptr<kube::Client> client_;
  ControllerCaches caches_;
  std::shared_ptr<kube::EventRecorder> events_;
  std::shared_ptr<KeyEvents> keys_;
  ControllerOptions options_;
  ControllerCounters counters_;
  std::mutex states_mu_;
  std::map<TuningKey, KeyState> states_;
  // Pod uids whose exporters the scraper holds, per key, so gone pods are forgotten there.
  std::map<TuningKey, std::set<std::string>> scraped_pods_;  // under states_mu_
  // The TPU Nodes' shapes, parsed once per change of the Node cache (not per reconcile).
  std::unique_ptr<workload::NodeCacheShapes> node_shapes_;
  std::unique_ptr<ExporterScraper> scraper_;  // null with options.prometheus
};

}  // namespace graintune::op
