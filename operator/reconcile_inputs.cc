// TuningController's reading of one key's reconcile input (tuning_controller.h): the stored
// GrainTuning and the pods' facts from the caches, the decision inputs from the newest pod's spec
// (as the webhook read them), and each attempt's steps (from the exporters through the scraper,
// or from Prometheus).
#include "operator/tuning_controller.h"

#include <ctime>

#include "base/log.h"
#include "base/rfc3339.h"
#include "operator/prometheus_source.h"
#include "workload/cluster_sources.h"
#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"
#include "workload/tuning_inputs.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

// Seconds from an RFC 3339 UTC timestamp (2026-11-30T06:00:00Z) to `now`; 0 when unparseable.
double SecondsSince(const std::string& when, Clock::WallTime now) {
  const std::optional<std::time_t> then = ParseRfc3339(when);
  return then ? std::difftime(std::chrono::system_clock::to_time_t(now), *then) : 0;
}

// The attempt whose hosts are still to report the value their trainer started with: status.lap's,
// while fewer hosts reported it (status.lap.startedHosts) than ran a lap. nullopt: none.
std::optional<int> LapStartsDue(const std::optional<json>& grain_tuning, const std::vector<PodFacts>& pods) {
  if (!grain_tuning) return std::nullopt;
  const std::optional<workload::LapStatus> lap = workload::StatusWithoutListsOf(*grain_tuning).lap;
  if (!lap) return std::nullopt;
  int lapped = 0;
  for (const PodFacts& p : pods) lapped += p.attempt == lap->attempt && p.lap_answer_wait_seconds > 0;
  if (lap->started_hosts >= lapped) return std::nullopt;
  return lap->attempt;
}

}  // namespace

void TuningController::ReadRunningAttempts(const TuningKey& key, ReconcileInput& in,
                                           std::map<int, bool>& scraped) {
  std::map<int, std::vector<const PodFacts*>> running;  // attempt -> its running pods, in order
  for (const PodFacts& p : in.pods)
    if (p.phase == "Running" && !p.pod_ip.empty() && !scraped[p.attempt]) running[p.attempt].push_back(&p);
  std::vector<std::string> asked;
  for (const auto& [attempt, pods] : running) {
    // A pod whose exporter was read: its steps (Latest also queues a fresh read when due).
    for (const PodFacts* p : pods) {
      if (scraper_->KnownOf(p->uid) != ExporterScraper::Known::kRead) continue;
      asked.push_back(p->uid);
      if (std::optional<telemetry::StepsDocument> doc = scraper_->Latest(key, *p)) {
        in.steps[attempt] = std::move(doc).value();
        scraped[attempt] = true;
        break;
      }
    }
    if (scraped[attempt]) continue;
    // None yet: ask a few pods at a time, those not known to fail first (a failing one is
    // retried only when its backoff allows). Asking every pod of a new 256-host slice at once
    // queued thousands of first reads at scale, and the blackholed ones among them held every
    // scrape slot for a minute; the scraper calls the key back as soon as one answers.
    int probing = 0;
    for (const ExporterScraper::Known wanted : {ExporterScraper::Known::kNothing, ExporterScraper::Known::kFailing})
      for (const PodFacts* p : pods) {
        if (probing >= std::max(1, options_.first_reads_per_attempt)) break;
        if (scraper_->KnownOf(p->uid) != wanted) continue;
        asked.push_back(p->uid);
        (void)scraper_->Latest(key, *p);
        ++probing;
      }
  }
  // Every host's practice lap, while its pod waits for the answer: one value for the run
  // needs the lap of each. After the answer, each host of the lap's attempt once more, until it
  // reported the value its trainer started with: one value on every host is what the run's
  // checkpoints need, and an attempt's steps are read from one pod only.
  const std::optional<int> starts_due = LapStartsDue(in.grain_tuning, in.pods);
  for (const PodFacts& p : in.pods) {
    const bool start_due = starts_due && p.attempt == *starts_due && p.lap_answer_wait_seconds > 0;
    if (!(p.AwaitsLapAnswer() || start_due) || p.phase != "Running" || p.pod_ip.empty()) continue;
    asked.push_back(p.uid);
    if (std::optional<telemetry::StepsDocument> doc = scraper_->Latest(key, p); doc && doc->lap)
      in.laps[p.uid] = std::move(doc->lap).value();
  }
  std::lock_guard<std::mutex> lock(states_mu_);
  scraped_pods_[key].insert(asked.begin(), asked.end());
}

std::optional<ReconcileInput> TuningController::ReadReconcileInput(const TuningKey& tuning_key,
                                                                  const std::vector<IndexedPod>& pods) {
  const std::string& ns = tuning_key.ns;
  const std::string& key = tuning_key.key;
  ReconcileInput in;
  in.ns = ns;
  in.tuning_key = key;
  in.now = FormatRfc3339(options_.clock->WallNow());
  in.warmup_steps = options_.warmup_steps;
  in.grain_tuning = caches_.graintunings->Get(ns, workload::GrainTuningName(key));
  const IndexedPod* newest = nullptr;
  for (const IndexedPod& p : pods) {
    in.pods.push_back(p.facts);
    if (!newest || p.facts.attempt >= newest->facts.attempt) newest = &p;
  }
  // Its spec, the one Pod object a reconcile reads from the cache. Deleted meanwhile: its delete
  // event queues the key again.
  std::optional<json> newest_pod = caches_.pods->Get(ns, newest->facts.name);
  if (!newest_pod) return std::nullopt;

  // The decision inputs, read from the newest pod the way the webhook read them.
  // One NodeCacheShapes for every reconcile, over the Node facts the informer's events keep.
  workload::NodeCacheShapes& shapes = *node_shapes_;
  workload::ConfigMapSource& configmaps = *caches_.configmaps;
  workload::PolicyCache policies(caches_.policies, caches_.namespaces);
  std::vector<std::string> input_warnings;
  Result<TuningInputs> inputs = workload::ReadPodTuningInputs(
      *newest_pod, ns, workload::PodInputSources{shapes, configmaps, policies}, input_warnings);
  if (inputs.ok()) {
    in.policy_name = inputs->policy.object_name;
    in.dataset_kind = ToString(inputs->profile.kind);
    in.inputs = std::move(inputs).value();
  }

  // Steps of each attempt still running, from one of its pods.
  std::map<int, bool> scraped;
  if (options_.prometheus)
    for (const PodFacts& p : in.pods) {
      if (p.phase != "Running" || p.pod_ip.empty() || scraped[p.attempt]) continue;
      const double run_seconds = SecondsSince(p.started, options_.clock->WallNow());
      if (run_seconds <= 0 || !in.inputs) continue;
      Result<Trial> t = TrialFromPrometheus(*options_.prometheus, p.uid, run_seconds, p.attempt,
                                            p.workers, in.inputs->demand.tokens_per_step_per_host);
      if (!t.ok()) {
        Log(LogLevel::kWarning, ns + "/" + p.name + ": " + t.error());
        continue;
      }
      in.measured[p.attempt] = *t;
      scraped[p.attempt] = true;
    }
  if (scraper_ && !options_.prometheus) {
    ReadRunningAttempts(tuning_key, in, scraped);
    // An attempt none of whose pods runs any more: the steps last read from one of its pods are
    // its final record (a trial's progress deferred below is not lost when the attempt ends).
    for (const PodFacts& p : in.pods) {
      if (p.phase == "Running" || scraped[p.attempt] || p.oom_killed) continue;
      if (std::optional<telemetry::StepsDocument> last = scraper_->Peek(p.uid)) {
        in.steps[p.attempt] = *last;
        scraped[p.attempt] = true;
      }
    }
  }

  return in;
}

}  // namespace graintune::op
