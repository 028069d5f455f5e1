#include "operator/tuning_controller.h"

#include "base/log.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <set>

#include "kube/backoff.h"
#include "operator/prometheus_source.h"
#include "operator/tuning_key.h"
#include "workload/cluster_sources.h"
#include "workload/graintune_objects.h"
#include "workload/tuning_inputs.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;

std::string NowRfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Seconds from an RFC 3339 UTC timestamp (2026-11-30T06:00:00Z) to now; 0 when unparseable.
double SecondsSince(const std::string& when) {
  std::tm tm{};
  if (when.size() < 20 || !strptime(when.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return std::difftime(std::time(nullptr), timegm(&tm));
}


// A failed API call as a reconcile error: retryable when trying again later can help.
ReconcileError ErrorOf(const std::string& doing, const kube::ApiError& error) {
  return {.terminal = !error.IsRetryable() && !error.IsConflict(),
          .message = doing + ": " + error.ToString()};
}

const kube::ResourceType* WorkloadType(const std::string& kind) {
  if (kind == "JobSet") return &kube::resources::kJobSets;
  if (kind == "Job") return &kube::resources::kJobs;
  if (kind == "Pod") return &kube::resources::kPods;
  return nullptr;
}

}  // namespace

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
                          .now = options_.now,
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
  return options_.now ? options_.now() : std::chrono::steady_clock::now();
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
  std::string pods_version;
  for (const IndexedPod& p : pods) pods_version += p.facts.uid + "@" + p.resource_version + ",";
  const auto now = Now();
  if (pods.empty()) {
    {
      std::lock_guard<std::mutex> lock(states_mu_);
      states_.erase(key);  // a new pod starts afresh
      ForgetGonePods(key, pods);
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
    return;
  }
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    auto [it, fresh] = states_.try_emplace(
        key, KeyState{.backoff = kube::Backoff(options_.backoff_initial, options_.backoff_max)});
    KeyState& state = it->second;
    const bool pods_changed = fresh || pods_version != state.pods_version;
    if ((state.parked && !pods_changed) || (state.backing_off && now < state.due)) {
      ++counters_.deferred;
      if (state.backing_off)
        keys_->queue().AddAfter(
            key, std::chrono::ceil<std::chrono::milliseconds>(state.due - now));
      return;
    }
    state.pods_version = pods_version;
    ForgetGonePods(key, pods);
  }
  ReconcileOutcome outcome = ReconcileKey(key, pods);
  std::lock_guard<std::mutex> lock(states_mu_);
  KeyState& state = states_.at(key);
  if (outcome.ok()) {
    state.parked = state.backing_off = false;
    state.backoff.Reset();
    keys_->queue().Forget(key);
    if (outcome->requeue_after.count() > 0) keys_->queue().AddAfter(key, outcome->requeue_after);
    return;
  }
  ++counters_.reconcile_errors;
  Log(LogLevel::kWarning, key.ToString() + ": " + outcome.error().message +
      (outcome.error().terminal ? " (not retried until its pods change)" : ""));
  state.parked = outcome.error().terminal;
  state.backing_off = !state.parked;
  const std::chrono::milliseconds wait = state.backoff.Next();
  state.due = now + wait;
  if (state.backing_off) keys_->queue().AddAfter(key, wait);
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
      Forgettable(*gt, options_.forget_after, std::time(nullptr))) {
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
  const json status = gt.value("status", json::object());
  const std::vector<int> ended = EndedAttempts(status, {});
  if (ended.empty() || json(ended) == status.value("endedAttempts", json::array())) return Status::Ok();
  const json meta = gt.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  bool changed = false;
  kube::ApiResult<json> written = kube::UpdateWithRetry(
      *client_, kube::resources::kGrainTunings, ns, name, "status", [&](json& latest) {
        json& s = latest["status"];
        if (!s.is_object()) s = json::object();
        const json now_ended = EndedAttempts(s, {});
        if (now_ended == s.value("endedAttempts", json::array())) return false;
        s["endedAttempts"] = now_ended;
        changed = true;
        return true;
      });
  if (!written.ok() && written.error().IsNotFound()) return Status::Ok();
  if (!written.ok())
    return Status::Error("writing status of GrainTuning " + ns + "/" + name + ": " + written.error().ToString());
  if (changed) ++counters_.status_writes;
  return Status::Ok();
}

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
      if (std::optional<StepsDocument> doc = scraper_->Latest(key, *p)) {
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
  std::lock_guard<std::mutex> lock(states_mu_);
  scraped_pods_[key].insert(asked.begin(), asked.end());
}

ReconcileOutcome TuningController::ReconcileKey(const TuningKey& tuning_key,
                                                const std::vector<IndexedPod>& pods) {
  const std::string& ns = tuning_key.ns;
  const std::string& key = tuning_key.key;
  ++counters_.reconciles;
  LogLine(LogLevel::kDebug) << "reconcile " << ns << "/" << key << ": " << pods.size() << " pods";
  ReconcileInput in;
  in.ns = ns;
  in.tuning_key = key;
  in.now = NowRfc3339();
  in.warmup_steps = options_.warmup_steps;
  const std::string name = workload::GrainTuningName(key);
  in.grain_tuning = caches_.graintunings->Get(ns, name);
  const IndexedPod* newest = nullptr;
  for (const IndexedPod& p : pods) {
    in.pods.push_back(p.facts);
    if (!newest || p.facts.attempt >= newest->facts.attempt) newest = &p;
  }
  // Its spec, the one Pod object a reconcile reads from the cache. Deleted meanwhile: its delete
  // event queues the key again.
  std::optional<json> newest_pod = caches_.pods->Get(ns, newest->facts.name);
  if (!newest_pod) return ReconcileResult{};

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
      const double run_seconds = SecondsSince(p.started);
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
      if (std::optional<StepsDocument> last = scraper_->Peek(p.uid)) {
        in.steps[p.attempt] = *last;
        scraped[p.attempt] = true;
      }
    }
  }

  ReconcileOutput out = ReconcileTuning(in);
  if (!out.problem.empty()) Log(LogLevel::kWarning, ns + "/" + key + ": " + out.problem);
  // The object the status write starts from: the cache's copy, or the one just created.
  std::optional<json> base = in.grain_tuning;
  if (!in.grain_tuning) {
    kube::ApiResult<json> created = client_->Create(kube::resources::kGrainTunings, ns, out.object);
    if (!created.ok() && !created.error().IsAlreadyExists())
      return ErrorOf("creating GrainTuning " + ns + "/" + name, created.error());
    if (created.ok()) base = *created;
    out.status_changed = true;
  }
  // The cache may not hold our last write yet (its event is on the way): the status is
  // computed again from the stored object before writing, so a stale copy never overwrites
  // newer data, and events are recorded only by the write that stores what they tell.
  bool wrote = false;
  // Progress waits only for attempts whose pods all run: an attempt with a pod that is ending
  // (deleted, finished, failed) may lose its exporter's last steps, so they are written now.
  // Judged against the cached copy first, and again against the stored object inside the write
  // (a cache that lags our last write would make progress look like news).
  std::set<int> ending;
  for (const PodFacts& p : in.pods)
    if (!p.Alive()) ending.insert(p.attempt);
  const auto now = Now();
  std::optional<std::chrono::steady_clock::time_point> due;
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    if (const auto& last = states_.at(tuning_key).last_status_write)
      due = *last + options_.progress_write_interval;
  }
  const bool may_defer = options_.progress_write_interval.count() > 0 && due && now < *due;
  const auto progress_waits = [&](const json& stored, const json& desired) {
    return may_defer && ProgressOnly(stored, desired) && !TrialsDiffer(stored, desired, ending);
  };
  // Not lost: the key comes back when the write is due (or earlier, for the running requeue or
  // an event), and the status is computed afresh then.
  const auto deferred = [&] {
    ++counters_.progress_deferred;
    return ReconcileResult{std::min(std::chrono::ceil<std::chrono::milliseconds>(*due - now),
                                    options_.running_requeue)};
  };
  if (out.status_changed && in.grain_tuning &&
      progress_waits(in.grain_tuning->value("status", json::object()), out.status))
    return deferred();
  bool waits = false;
  if (out.status_changed) {
    const auto mutate = [&](json& gt) {
          wrote = waits = false;
          in.grain_tuning = gt;
          ReconcileOutput latest = ReconcileTuning(in);
          const json stored = gt.value("status", json::object());
          if (StatusEquivalent(stored, latest.status)) return false;
          if (progress_waits(stored, latest.status)) {
            waits = true;
            return false;
          }
          gt["status"] = latest.status;
          out = std::move(latest);
          wrote = true;
          return true;
        };
    // From the cached copy (one request); a stale copy gets 409 and is read again.
    kube::ApiResult<json> written =
        base ? kube::UpdateFromCacheWithRetry(*client_, kube::resources::kGrainTunings, ns, name,
                                              "status", *base, mutate)
             : kube::UpdateWithRetry(*client_, kube::resources::kGrainTunings, ns, name, "status",
                                     mutate);
    // Events wait until the status they describe is stored.
    if (!written.ok()) return ErrorOf("writing status of GrainTuning " + ns + "/" + name, written.error());
    if (waits) return deferred();
    if (wrote) {
      ++counters_.status_writes;
      std::lock_guard<std::mutex> lock(states_mu_);
      states_.at(tuning_key).last_status_write = Now();
    }
  }
  const bool alive = std::any_of(in.pods.begin(), in.pods.end(), [](const PodFacts& p) { return p.Alive(); });
  const ReconcileResult result{alive ? options_.running_requeue : std::chrono::milliseconds(0)};
  if (wrote)
    counters_.ended_early += std::count_if(out.events.begin(), out.events.end(),
                                           [](const EventToRecord& e) { return e.reason == "EndedEarly"; });
  // Events wait for the status they describe; a refused exporter answer has none to wait for.
  if (!wrote) out.events.clear();
  for (EventToRecord& e : TakeRejectionEvents(tuning_key)) out.events.push_back(std::move(e));
  if (out.events.empty() || in.pods.empty()) return result;
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
  if (regarding.is_null()) return result;
  for (const EventToRecord& e : out.events) {
    Status s = events_->Record(regarding, {.type = e.type, .reason = e.reason, .action = "Tune",
                                           .note = e.note});
    if (s.ok()) ++counters_.events;
    else Log(LogLevel::kWarning, s.message());
  }
  return result;
}

}  // namespace graintune::op
