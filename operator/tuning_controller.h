// The operator's reconcile loop: every resync period, for every tuning key with pods graintune
// manages, read the caches, scrape the exporters of running pods, call ReconcileTuning() and
// write what changed (GrainTuning create, status with conflict retry, Events on the workload).
// Runs only while this replica leads. Everything it learns is written to the API, so a restarted
// operator starts from there.
//
// Reconciling is level-based, in controller-runtime's shape: one key's reconcile returns when to
// look again ({requeue_after}) or an error. A pass reconciles a key when it is due or its pods
// changed (any pod's resourceVersion). A retryable error (no answer, 409 after retries, 429,
// 5xx) backs that key off exponentially (ControllerOptions::backoff_*), so one failing key does
// not cost every pass; a terminal error (403, 422, ...) parks the key until its pods change.
// A key with no pod alive has nothing to measure: it is looked at again after idle_requeue, or
// at once when a pod of it changes.
//
// Thread-safety: ReconcileAll() is called from one thread; counters() may be read from any.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kube/backoff.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "operator/step_log.h"
#include "operator/tuning_reconciler.h"
#include "workload/sources.h"

namespace graintune::op {

struct ControllerCaches {
  std::shared_ptr<kube::Informer> pods;  // label graintune.dev/managed=true
  std::shared_ptr<kube::Informer> graintunings;
  std::shared_ptr<kube::Informer> policies;
  std::shared_ptr<kube::Informer> namespaces;
  std::shared_ptr<kube::Informer> nodes;  // TPU Nodes (label cloud.google.com/gke-tpu-accelerator)
  // The ConfigMaps tuned pods mount, read by name when needed (workload::ConfigMapFetcher).
  std::shared_ptr<workload::ConfigMapSource> configmaps;

  bool Synced() const;
  void Start();
  void Stop();
};

// When to reconcile a key again; zero: at the next pass.
struct ReconcileResult {
  std::chrono::milliseconds requeue_after{0};
};

// Why a reconcile failed; terminal errors are not retried until the key's pods change.
struct ReconcileError {
  bool terminal = false;
  std::string message;
  Status ToStatus() const { return Status::Error(message); }
};

using ReconcileOutcome = Result<ReconcileResult, ReconcileError>;

struct ControllerOptions {
  std::chrono::milliseconds scrape_timeout{3000};
  size_t max_scrape_bytes = 8u << 20;
  int warmup_steps = 2;
  // GrainTunings without pods and without activity for this long are deleted (Forgettable());
  // 0 keeps them forever.
  std::chrono::seconds forget_after{0};
  // When set, trials come from this Prometheus (query API) instead of the exporters' /steps.
  std::shared_ptr<kube::Client> prometheus;
  std::chrono::milliseconds idle_requeue{60000};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{std::chrono::minutes(5)};
  // The clock for requeues and backoff; steady_clock when empty (tests pass their own).
  std::function<std::chrono::steady_clock::time_point()> now;
};

struct ControllerCounters {
  std::atomic<long> reconciles{0}, reconcile_errors{0}, scrapes{0}, scrape_errors{0},
      status_writes{0}, events{0}, forgotten{0},
      deferred{0};  // key reconciles skipped: not due (requeue, backoff, parked)
};

class TuningController {
 public:
  TuningController(std::shared_ptr<kube::Client> client, ControllerCaches caches,
                   std::shared_ptr<kube::EventRecorder> events, ControllerOptions options = {});
  // One pass over every tuning key that is due. Errors are counted and logged, never thrown.
  void ReconcileAll();
  const ControllerCounters& counters() const { return counters_; }

 private:
  Result<StepsDocument> Scrape(const PodFacts& pod);
  struct TunedPod {
    PodFacts facts;
    nlohmann::json object;
  };
  ReconcileOutcome ReconcileKey(const std::string& ns, const std::string& key,
                                const std::vector<TunedPod>& pods);
  // Where a key stands between passes.
  struct KeyState {
    std::string pods_version;  // its pods' uids and resourceVersions when last reconciled
    std::chrono::steady_clock::time_point due{};
    bool parked = false;       // a terminal error: wait for its pods to change
    bool backing_off = false;  // a retryable error: wait for `due` even if its pods change
    kube::Backoff backoff;
  };
  std::chrono::steady_clock::time_point Now() const;
  // A GrainTuning none of whose pods is left (all deleted: a Kueue preemption, a finished
  // or deleted workload): its measured attempts have ended.
  void MarkAttemptsEnded(const nlohmann::json& grain_tuning);
  // Deletes a Forgettable() GrainTuning (uid precondition).
  void Forget(const nlohmann::json& grain_tuning);

  std::shared_ptr<kube::Client> client_;
  ControllerCaches caches_;
  std::shared_ptr<kube::EventRecorder> events_;
  ControllerOptions options_;
  ControllerCounters counters_;
  std::map<std::pair<std::string, std::string>, KeyState> keys_;  // (namespace, tuning key)
};

}  // namespace graintune::op
