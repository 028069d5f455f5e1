#include "operator/tuning_controller.h"

#include "base/log.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <set>

#include "kube/backoff.h"
#include "operator/tuning_key.h"
#include "workload/cluster_sources.h"
#include "workload/configmap_fetcher.h"
#include "workload/graintune_objects.h"
#include "workload/workload_annotations.h"

namespace graintune::op {

using json = nlohmann::json;

ReconcileError ReconcileErrorOf(const std::string& doing, const kube::ApiError& error) {
  return {.terminal = !error.IsRetryable() && !error.IsConflict(),
          .message = doing + ": " + error.ToString()};
}

ControllerCaches ControllerCaches::ForClient(std::shared_ptr<kube::Client> client, KeyEvents& keys) {
  const kube::InformerOptions all{.transform = kube::DropManagedFields};
  kube::InformerOptions managed = all;
  managed.label_selector = "graintune.dev/managed=true";
  ControllerCaches c;
  c.pods = std::make_shared<kube::Informer>(client, kube::resources::kPods, managed, keys.ForPods());
  c.graintunings = std::make_shared<kube::Informer>(client, kube::resources::kGrainTunings, all,
                                                    keys.ForGrainTunings());
  c.policies = std::make_shared<kube::Informer>(client, kube::resources::kGrainTunePolicies, all,
                                                keys.ForSelectionChanges());
  c.namespaces = std::make_shared<kube::Informer>(client, kube::resources::kNamespaces, all,
                                                  keys.ForSelectionChanges());
  c.nodes = workload::MakeTpuNodeCache(client);
  c.configmaps = std::make_shared<workload::ConfigMapFetcher>(workload::FetchConfigMapData(client));
  return c;
}

bool ControllerCaches::Synced() const {
  for (const auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes.informer})
    if (!*i || !(*i)->Synced()) return false;
  return nodes.facts != nullptr && configmaps != nullptr;
}

void ControllerCaches::Start() {
  for (auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes.informer}) (*i)->Start();
}

void ControllerCaches::Stop() {
  for (auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes.informer})
    if (*i) (*i)->Stop();
}

TuningController::TuningController(std::shared_ptr<kube::Client> client, ControllerCaches caches,
                                   std::shared_ptr<kube::EventRecorder> events,
                                   std::shared_ptr<KeyEvents> keys, ControllerOptions options)
    : client_(std::move(client)), caches_(std::move(caches)), events_(std::move(events)),
      keys_(std::move(keys)), options_(std::move(options)),
      node_shapes_(std::make_unique<workload::NodeCacheShapes>(caches_.nodes)) {
  if (options_.prometheus) return;
  ScraperOptions scraping{.concurrency = options_.scrape_concurrency,
                          .timeout = options_.scrape_timeout,
                          .max_bytes = options_.max_scrape_bytes,
                          // Steps read within half a requeue count as fresh: a read
                          // finishes a little after the reconcile that queued it, and the
                          // next periodic reconcile must still find them stale.
                          .fresh_for = options_.running_requeue / 2,
                          .clock = options_.clock,
                          .observe = [this](std::chrono::duration<double>, bool ok) {
                            ++counters_.scrapes;
                            if (!ok) ++counters_.scrape_errors;
                          },
                          .on_rejected = [this](const PodFacts& pod, const std::string& reason) {
                            ++counters_.rejected_answers;
                            NoteRejection(pod, reason);
                          }};
  scraper_ = std::make_unique<ExporterScraper>(
      scraping, options_.fetch ? options_.fetch : StepsFetch(FetchExporterSteps),
      [queue = &keys_->queue()](const TuningKey& key) { queue->Add(key); });
}

TuningController::~TuningController() { scraper_.reset(); }

void TuningController::NoteRejection(const PodFacts& pod, const std::string& reason) {
  const TuningKey key{pod.ns, pod.tuning_key};
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    KeyState& state = states_[key];
    if (state.rejections_reported.count(pod.attempt)) return;
    if (!state.rejections_pending.emplace(pod.attempt, pod.name + ": " + reason).second) return;
  }
  keys_->queue().Add(key);  // the Warning goes out with the key's next reconcile
}

std::vector<EventToRecord> TuningController::TakeRejectionEvents(const TuningKey& key) {
  std::vector<EventToRecord> events;
  std::lock_guard<std::mutex> lock(states_mu_);
  auto it = states_.find(key);
  if (it == states_.end()) return events;
  for (auto& [attempt, why] : it->second.rejections_pending) {
    if (!it->second.rejections_reported.insert(attempt).second) continue;
    std::string note = "attempt " + std::to_string(attempt) + ": the exporter of pod " + why +
                       "; graintune does not use that answer (it keeps the attempt's figures read before)";
    if (note.size() > 1024) note.resize(1024);
    events.push_back({"Warning", "ExporterAnswerRejected", note});
  }
  it->second.rejections_pending.clear();
  return events;
}

std::chrono::steady_clock::time_point TuningController::Now() const {
  return options_.clock->SteadyNow();
}

ScraperFigures TuningController::scraper_figures() const {
  return scraper_ ? scraper_->Figures() : ScraperFigures{};
}

void TuningController::EnqueueAll() {
  for (const TuningKey& key : keys_->pods().Keys()) keys_->queue().Add(key);
  for (const json& gt : caches_.graintunings->List())
    if (std::optional<TuningKey> key = TuningKeyOfGrainTuning(gt)) keys_->queue().Add(*key);
}

void TuningController::Run(std::stop_token stop, const std::function<bool()>& may_run) {
  while (!stop.stop_requested()) {
    if (!may_run()) {
      // A follower reconciles nothing and keeps no backlog: the leader it may become queues
      // every key once (EnqueueAll).
      while (std::optional<TuningKey> key = keys_->queue().TryGet()) keys_->queue().Done(*key);
      kube::SleepFor(std::chrono::milliseconds(200), stop);
      continue;
    }
    std::optional<TuningKey> key = keys_->queue().Get(stop);
    if (!key) return;
    if (may_run()) Process(*key);
    else keys_->queue().Add(*key);  // leadership lost meanwhile: the next leader's
    keys_->queue().Done(*key);
  }
}

int TuningController::ProcessReady() {
  // Only the keys ready now: those queued while they are processed wait for the next call.
  const size_t ready = keys_->queue().Depth().ready;
  int handed_out = 0;
  while (static_cast<size_t>(handed_out) < ready) {
    std::optional<TuningKey> key = keys_->queue().TryGet();
    if (!key) break;
    ++handed_out;
    Process(*key);
    keys_->queue().Done(*key);
  }
  return handed_out;
}

void TuningController::Process(const TuningKey& key) {
  // The facts the pods' events left in the index: no Pod object is copied or read again here.
  std::vector<IndexedPod> pods = keys_->pods().FactsOf(key);
  if (pods.empty()) return ProcessWithoutPods(key);
  // An event (or an earlier requeue) brought the key in while its backoff runs: it comes
  // back when the backoff has passed.
  if (const std::chrono::milliseconds wait = keys_->queue().RateLimitedFor(key); wait.count() > 0) {
    ++counters_.deferred;
    keys_->queue().AddAfter(key, wait);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    states_.try_emplace(key);
    ForgetGonePods(key, pods);
  }
  ReconcileOutcome outcome = ReconcileKey(key, pods);
  if (outcome.ok()) {
    keys_->queue().Forget(key);
    if (outcome->requeue_after.count() > 0) keys_->queue().AddAfter(key, outcome->requeue_after);
    return;
  }
  ++counters_.reconcile_errors;
  Log(LogLevel::kWarning, key.ToString() + ": " + outcome.error().message +
      (outcome.error().terminal ? " (not retried until an event queues the key)" : ""));
  if (outcome.error().terminal) keys_->queue().Forget(key);
  else keys_->queue().AddRateLimited(key);
}

void TuningController::ProcessWithoutPods(const TuningKey& key) {
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    states_.erase(key);  // a new pod starts afresh
    ForgetGonePods(key, {});
  }
  Result<std::chrono::milliseconds> again = ReconcileWithoutPods(key);
  if (!again.ok()) {
    ++counters_.reconcile_errors;
    Log(LogLevel::kWarning, key.ToString() + ": " + again.error());
    keys_->queue().AddRateLimited(key);
  } else {
    keys_->queue().Forget(key);
    if (again->count() > 0) keys_->queue().AddAfter(key, *again);
  }
}

void TuningController::ForgetGonePods(const TuningKey& key, const std::vector<IndexedPod>& pods) {
  auto held = scraped_pods_.find(key);
  if (!scraper_ || held == scraped_pods_.end()) return;
  std::set<std::string> alive;
  for (const IndexedPod& p : pods) alive.insert(p.facts.uid);
  std::erase_if(held->second, [&](const std::string& uid) {
    if (alive.count(uid)) return false;
    scraper_->Forget(uid);
    return true;
  });
  if (held->second.empty()) scraped_pods_.erase(held);
}

Result<std::chrono::milliseconds> TuningController::ReconcileWithoutPods(const TuningKey& key) {
  std::optional<json> gt = caches_.graintunings->Get(key.ns, workload::GrainTuningName(key.key));
  if (!gt) return std::chrono::milliseconds(0);
  if (options_.forget_after.count() > 0 &&
      Forgettable(*gt, options_.forget_after,
                  std::chrono::system_clock::to_time_t(options_.clock->WallNow()))) {
    if (Status s = Forget(*gt); !s.ok()) return s;
    return std::chrono::milliseconds(0);
  }
  if (Status s = MarkAttemptsEnded(*gt); !s.ok()) return s;
  // Looked at again when it may have become forgettable (Forgettable() wants strictly more
  // than forget_after since the last activity, in whole seconds).
  if (options_.forget_after.count() == 0) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(options_.forget_after +
                                                               std::chrono::seconds(1));
}

Status TuningController::Forget(const json& gt) {
  const json meta = gt.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  // Only the object this reconcile judged: a GrainTuning recreated meanwhile under the name stays.
  kube::ApiResult<json> deleted =
      client_->Delete(kube::resources::kGrainTunings, ns, name, meta.value("uid", ""));
  if (!deleted.ok() && deleted.error().IsConflict()) return Status::Ok();  // a new one took the name
  if (!deleted.ok() && !deleted.error().IsNotFound())
    return Status::Error("deleting GrainTuning " + ns + "/" + name + ": " + deleted.error().ToString());
  ++counters_.forgotten;
  Log(LogLevel::kInfo, "forgot GrainTuning " + ns + "/" + name + ": no pods and no activity for " +
      std::to_string(options_.forget_after.count()) + " s");
  return Status::Ok();
}

Status TuningController::MarkAttemptsEnded(const json& gt) {
  const workload::GrainTuningStatus status = workload::StatusOf(gt);
  const std::vector<int> ended = EndedAttempts(status, {});
  if (ended.empty() || ended == status.ended_attempts) return Status::Ok();
  const json meta = gt.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  bool changed = false;
  kube::ApiResult<json> written = kube::UpdateWithRetry(
      *client_, kube::resources::kGrainTunings, ns, name, "status", [&](json& latest) {
        workload::GrainTuningStatus s = workload::StatusOf(latest);
        const std::vector<int> now_ended = EndedAttempts(s, {});
        if (now_ended == s.ended_attempts) return false;
        s.ended_attempts = now_ended;
        latest["status"] = workload::ToJson(s);
        changed = true;
        return true;
      });
  if (!written.ok() && written.error().IsNotFound()) return Status::Ok();
  if (!written.ok())
    return Status::Error("writing status of GrainTuning " + ns + "/" + name + ": " + written.error().ToString());
  if (changed) ++counters_.status_writes;
  return Status::Ok();
}

std::optional<ReconcileError> TuningController::WriteLapAnswer(const TuningKey& key, const LapAnswerWrite& write) {
  const nlohmann::json patch = {{"metadata", {{"annotations", {{workload::kLapValueAnnotation, write.answer}}}}}};
  for (const std::string& pod : write.pods) {
    kube::ApiResult<nlohmann::json> patched =
        client_->Patch(kube::resources::kPods, key.ns, pod, kube::PatchType::kMerge, patch);
    if (!patched.ok() && !patched.error().IsNotFound())
      return ReconcileErrorOf("writing the practice lap's answer on pod " + key.ns + "/" + pod, patched.error());
    if (patched.ok()) ++counters_.lap_answers;
  }
  LogLine(LogLevel::kInfo) << key.ToString() << ": practice lap answered " << write.answer << " on "
                           << write.pods.size() << " pods";
  return std::nullopt;
}

ReconcileOutcome TuningController::ReconcileKey(const TuningKey& tuning_key,
                                                const std::vector<IndexedPod>& pods) {
  ++counters_.reconciles;
  LogLine(LogLevel::kDebug) << "reconcile " << tuning_key.ToString() << ": " << pods.size() << " pods";
  std::optional<ReconcileInput> in = ReadReconcileInput(tuning_key, pods);
  if (!in) return ReconcileResult{};  // its newest pod was deleted meanwhile: its event queues the key
  ReconcileOutput out = ReconcileTuning(*in);
  ++counters_.status_reconciles;
  if (!out.problem.empty()) Log(LogLevel::kWarning, tuning_key.ToString() + ": " + out.problem);
  Result<StatusWrite, ReconcileError> written = WriteStatus(tuning_key, *in, out);
  if (!written.ok()) return written.error();
  // The answer a lap waits for follows the status that records it, and never waits for a
  // deferred progress write: its launchers wait a bounded time.
  if (out.lap_answer)
    if (std::optional<ReconcileError> error = WriteLapAnswer(tuning_key, *out.lap_answer)) return *error;
  if (written->deferred) return *written->deferred;
  const bool alive = std::any_of(in->pods.begin(), in->pods.end(), [](const PodFacts& p) { return p.Alive(); });
  // Events wait for the status they describe; a refused exporter answer has none to wait for.
  if (written->wrote)
    counters_.ended_early += std::count_if(out.events.begin(), out.events.end(),
                                           [](const EventToRecord& e) { return e.reason == "EndedEarly"; });
  else
    out.events.clear();
  for (EventToRecord& e : TakeRejectionEvents(tuning_key)) out.events.push_back(std::move(e));
  RecordEvents(tuning_key, *in, out.events);
  return ReconcileResult{alive ? options_.running_requeue : std::chrono::milliseconds(0)};
}

}  // namespace graintune::op
