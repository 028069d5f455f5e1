// KeyEvents: turns what the operator's informers see into tuning keys to reconcile, in
// controller-runtime's shape (event handlers that enqueue requests): a pod added, changed or
// deleted queues its key (and, when its key changed, the old one); a GrainTuning added, changed
// or deleted queues the key it records; a GrainTunePolicy or Namespace change queues every key
// with pods (a policy's selectors may now pick other workloads). Node changes queue nothing:
// a host's shape is read again at the key's next reconcile.
//
// It also keeps the index of pods by tuning key (PodsByTuningKey) from the same pod events, so
// a reconcile reads only its key's pods.
//
// Thread-safety: the handlers run on the informers' threads; every method may be called from
// any thread (the queue and the index are thread-safe).
#pragma once

#include <atomic>
#include <memory>

#include "kube/informer.h"
#include "operator/pods_by_tuning_key.h"
#include "operator/work_queue.h"

namespace graintune::op {

class KeyEvents {
 public:
  explicit KeyEvents(std::shared_ptr<WorkQueue> queue) : queue_(std::move(queue)) {}

  kube::InformerHandlers ForPods();
  kube::InformerHandlers ForGrainTunings();
  // Policies and Namespaces: every key with pods.
  kube::InformerHandlers ForSelectionChanges();

  WorkQueue& queue() { return *queue_; }
  // Events handled so far (every kind); tests wait on it.
  long handled() const { return handled_.load(); }
  const PodsByTuningKey& pods() const { return pods_; }

 private:
  void AddAll(const std::vector<TuningKey>& keys);
  void AddGrainTuning(const nlohmann::json& grain_tuning);

  std::shared_ptr<WorkQueue> queue_;
  PodsByTuningKey pods_;
  std::atomic<long> handled_{0};
};

}  // namespace graintune::op
