// TuningController's write of one key's GrainTuning status (creating the object first when it
// is new), with progress-only writes spaced by ControllerOptions::progress_write_interval, and
// the Events that tell what was written (tuning_controller.h).
#include "operator/tuning_controller.h"

#include <algorithm>
#include <set>

#include "base/log.h"
#include "kube/backoff.h"
#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

const kube::ResourceType* WorkloadType(const std::string& kind) {
  if (kind == "JobSet") return &kube::resources::kJobSets;
  if (kind == "Job") return &kube::resources::kJobs;
  if (kind == "Pod") return &kube::resources::kPods;
  return nullptr;
}

// Progress waits only for attempts whose pods all run: an attempt with a pod that is ending
// (deleted, finished, failed) may lose its exporter's last steps, so they are written now.
std::set<int> EndingAttempts(const std::vector<PodFacts>& pods) {
  std::set<int> ending;
  for (const PodFacts& p : pods)
    if (!p.Alive()) ending.insert(p.attempt);
  return ending;
}

}  // namespace

Result<TuningController::StatusWrite, ReconcileError> TuningController::WriteStatus(
    const TuningKey& tuning_key, ReconcileInput& in, ReconcileOutput& out) {
  const std::string& ns = tuning_key.ns;
  const std::string name = workload::GrainTuningName(tuning_key.key);
  // The object the status write starts from: the cache's copy, or the one just created.
  std::optional<json> base = in.grain_tuning;
  if (!in.grain_tuning) {
    kube::ApiResult<json> created = client_->Create(kube::resources::kGrainTunings, ns, out.object);
    if (!created.ok() && !created.error().IsAlreadyExists())
      return ReconcileErrorOf("creating GrainTuning " + ns + "/" + name, created.error());
    if (created.ok()) base = *created;
    out.status_changed = true;
  }
  // The cache may not hold our last write yet (its event is on the way): a stale copy gets 409
  // and is read again. `out` holds the reconcile of `reconciled_from` (for an object just
  // created, of none: the same, as its spec is what that reconcile made and it has no status);
  // only another object (a conflict's fresh read) is reconciled again, so a stale copy never
  // overwrites newer data. Events are recorded only by the write that stores what they tell.
  std::optional<json> reconciled_from = base;
  bool wrote = false;
  // Judged against the cached copy first, and again against the stored object inside the write
  // (a cache that lags our last write would make progress look like news).
  const std::set<int> ending = EndingAttempts(in.pods);
  const auto now = Now();
  std::optional<std::chrono::steady_clock::time_point> due;
  if (std::lock_guard<std::mutex> lock(states_mu_); const auto& last = states_.at(tuning_key).last_status_write)
    due = *last + options_.progress_write_interval;
  const bool may_defer = options_.progress_write_interval.count() > 0 && due && now < *due;
  const auto progress_waits = [&](const workload::GrainTuningStatus& stored,
                                  const workload::GrainTuningStatus& desired) {
    return may_defer && workload::ProgressOnly(stored, desired) && !workload::TrialsDiffer(stored, desired, ending);
  };
  // Not lost: the key comes back when due (or on the running requeue, or an event), afresh.
  const auto deferred = [&] {
    ++counters_.progress_deferred;
    return StatusWrite{.deferred = ReconcileResult{std::min(
                           std::chrono::ceil<std::chrono::milliseconds>(*due - now), options_.running_requeue)}};
  };
  workload::GrainTuningStatus desired = workload::StatusFromJson(out.status);
  if (out.status_changed && in.grain_tuning && progress_waits(workload::StatusOf(*in.grain_tuning), desired))
    return deferred();
  bool waits = false;
  if (out.status_changed) {
    const auto mutate = [&](json& gt) {
          wrote = waits = false;
          if (!reconciled_from || gt != *reconciled_from) {
            in.grain_tuning = gt;
            out = ReconcileTuning(in);
            ++counters_.status_reconciles;
            desired = workload::StatusFromJson(out.status);
            reconciled_from = gt;
          }
          const workload::GrainTuningStatus stored = workload::StatusOf(gt);
          if (workload::StatusEquivalent(stored, desired)) return false;
          if (progress_waits(stored, desired)) {
            waits = true;
            return false;
          }
          gt["status"] = out.status;
          wrote = true;
          return true;
        };
    kube::ApiResult<json> written =
        base ? kube::UpdateFromCacheWithRetry(*client_, kube::resources::kGrainTunings, ns, name,
                                              "status", *base, mutate)
             : kube::UpdateWithRetry(*client_, kube::resources::kGrainTunings, ns, name, "status",
                                     mutate);
    // Events wait until the status they describe is stored.
    if (!written.ok()) return ReconcileErrorOf("writing status of GrainTuning " + ns + "/" + name, written.error());
    if (waits) return deferred();
    if (wrote) {
      ++counters_.status_writes;
      std::lock_guard<std::mutex> lock(states_mu_);
      states_.at(tuning_key).last_status_write = Now();
    }
  }
  return StatusWrite{.wrote = wrote};
}

void TuningController::RecordEvents(const TuningKey& tuning_key, const ReconcileInput& in,
                                    const std::vector<EventToRecord>& events) {
  if (events.empty() || in.pods.empty()) return;
  const std::string& ns = tuning_key.ns;
  const std::string name = workload::GrainTuningName(tuning_key.key);
  // Events go on the workload people look at (the JobSet or Job), else on the GrainTuning.
  const PodFacts& any = in.pods.front();
  json regarding;
  if (const kube::ResourceType* type = WorkloadType(any.owner_kind)) {
    kube::ApiResult<json> w = client_->Get(*type, ns, any.owner_name);
    if (w.ok()) regarding = *w;
  }
  if (regarding.is_null()) {
    kube::ApiResult<json> g = client_->Get(kube::resources::kGrainTunings, ns, name);
    if (g.ok()) regarding = *g;
  }
  if (regarding.is_null()) return;
  for (const EventToRecord& e : events) {
    Status s = events_->Record(regarding, {.type = e.type, .reason = e.reason, .action = "Tune",
                                           .note = e.note});
    if (s.ok()) ++counters_.events;
    else Log(LogLevel::kWarning, s.message());
  }
}

}  // namespace graintune::op
