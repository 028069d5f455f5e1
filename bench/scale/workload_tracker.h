// Follows the benchmark's pods and GrainTunings through watches and keeps the exporter stand-in
// in step with them: every Running pod with an address gets an exporter at its IP and port
// (a tenth of them bad while SetBadExporters(true): pods whose index in their workload is a
// multiple of 10, alternately blackholed and slow), a pod that stops running loses it, and once
// every pod of a workload's attempt runs, that attempt's trainers start stepping. It also notes
// when each GrainTuning's status.recommendation first named each attempt.
//
// Thread-safety: its own thread syncs every 250 ms; every public method may be called from
// any thread. Errors met while syncing (an address that cannot be bound) are kept in
// errors(), never thrown.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/scale/exporter_standin.h"
#include "kube/informer.h"

namespace graintune::bench {

class WorkloadTracker {
 public:
  // `pods_per_key`: how many pods one attempt of each workload runs.
  WorkloadTracker(std::shared_ptr<kube::Client> client, const std::string& ns,
                  ExporterStandIn& standin, std::map<std::string, int> pods_per_key);
  ~WorkloadTracker();
  void Start();
  void Stop();

  void SetBadExporters(bool bad);
  // Whether the pod with this index in its workload gets a bad exporter while bad ones are on.
  static bool BadIndex(int index) { return index >= 0 && index % 10 == 0; }

  // Workloads whose `attempt` has every pod running (its trainers have started).
  int WorkloadsRunning(int attempt) const;
  // The workloads whose `attempt` is not running yet, each with its pods counted by attempt
  // and phase ("js-3: attempt 1 Running 255, attempt 1 Pending 1"): what a failure report names.
  std::vector<std::string> WorkloadsNotRunning(int attempt) const;
  // Single-host workloads not running `attempt` whose running pod carries the same, earlier
  // attempt as a Failed pod of theirs: a Job's retry the webhook numbered as the attempt it
  // replaces (it counts the Job's status.failed, which the Job controller may update after
  // creating the replacement). Such a workload never runs `attempt`.
  std::set<std::string> RetriesNumberedAsBefore(int attempt) const;
  // One running pod of every workload, of its newest attempt.
  std::vector<kube::Json> OneRunningPodPerWorkload() const;
  // When status.recommendation.attempt of `key` first was `attempt` or more.
  std::optional<SteadyTime> RecommendedAt(const std::string& key, int attempt) const;
  // GrainTuning updates seen in [from, to): the operator's writes.
  long TuningUpdatesBetween(SteadyTime from, SteadyTime to) const;
  std::vector<std::string> errors() const;

 private:
  void Sync();
  void OnTuning(const kube::Json& grain_tuning);

  std::shared_ptr<kube::Client> client_;
  ExporterStandIn& standin_;
  const std::map<std::string, int> pods_per_key_;
  std::unique_ptr<kube::Informer> pods_, tunings_;
  mutable std::mutex mu_;
  bool bad_ = false;
  std::set<std::string> served_;                           // pod uids with an exporter
  std::map<std::string, std::set<int>> started_;           // key -> attempts stepping
  std::map<std::string, std::map<int, SteadyTime>> recommended_;  // key -> attempt -> first seen
  std::vector<SteadyTime> tuning_updates_;
  std::vector<std::string> errors_;
  std::jthread thread_;
};

}  // namespace graintune::bench
