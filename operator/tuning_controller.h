// The operator's reconcile loop: every resync period, for every tuning key with pods graintune
// manages, read the caches, scrape the exporters of running pods, call ReconcileTuning() and
// write what changed (GrainTuning create, status with conflict retry, Events on the workload).
// Runs only while this replica leads. Everything it learns is written to the API, so a restarted
// operator starts from there.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "kube/events.h"
#include "kube/informer.h"
#include "operator/step_log.h"
#include "operator/tuning_reconciler.h"

namespace graintune::op {

struct ControllerCaches {
  std::shared_ptr<kube::Informer> pods;  // label graintune.dev/managed=true
  std::shared_ptr<kube::Informer> graintunings;
  std::shared_ptr<kube::Informer> policies;
  std::shared_ptr<kube::Informer> namespaces;
  std::shared_ptr<kube::Informer> nodes;
  std::shared_ptr<kube::Informer> configmaps;

  bool Synced() const;
  void Start();
  void Stop();
};

struct ControllerOptions {
  std::chrono::milliseconds scrape_timeout{3000};
  size_t max_scrape_bytes = 8u << 20;
  int warmup_steps = 2;
  // GrainTunings without pods and without activity for this long are deleted (Forgettable());
  // 0 keeps them forever.
  std::chrono::seconds forget_after{0};
  // When set, trials come from this Prometheus (query API) instead of the exporters' /steps.
  std::shared_ptr<kube::Client> prometheus;
};

struct ControllerCounters {
  std::atomic<long> reconciles{0}, reconcile_errors{0}, scrapes{0}, scrape_errors{0},
      status_writes{0}, events{0}, forgotten{0};
};

class TuningController {
 public:
  TuningController(std::shared_ptr<kube::Client> client, ControllerCaches caches,
                   std::shared_ptr<kube::EventRecorder> events, ControllerOptions options = {});
  // One pass over every tuning key. Errors are counted and logged, never thrown.
  void ReconcileAll();
  const ControllerCounters& counters() const { return counters_; }

 private:
  Result<StepsDocument> Scrape(const PodFacts& pod);
  struct TunedPod {
    PodFacts facts;
    nlohmann::json object;
  };
  void ReconcileKey(const std::string& ns, const std::string& key,
                    const std::vector<TunedPod>& pods);
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
};

}  // namespace graintune::op
