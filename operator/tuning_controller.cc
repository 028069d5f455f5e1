#include "operator/tuning_controller.h"

#include "base/log.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>

#include "kube/backoff.h"
#include "operator/prometheus_source.h"
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
  for (const auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes})
    if (!*i || !(*i)->Synced()) return false;
  return configmaps != nullptr;
}

void ControllerCaches::Start() {
  for (auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes}) (*i)->Start();
}

void ControllerCaches::Stop() {
  for (auto* i : {&pods, &graintunings, &policies, &namespaces, &nodes})
    if (*i) (*i)->Stop();
}

TuningController::TuningController(std::shared_ptr<kube::Client> client, ControllerCaches caches,
                                   std::shared_ptr<kube::EventRecorder> events,
                                   ControllerOptions options)
    : client_(std::move(client)), caches_(std::move(caches)), events_(std::move(events)),
      options_(options) {}

Result<StepsDocument> TuningController::Scrape(const PodFacts& pod) {
  ++counters_.scrapes;
  kube::ClientConfig target;
  target.server = "http://" + pod.pod_ip + ":" + std::to_string(pod.exporter_port);
  target.allow_plain_http = true;
  kube::ClientOptions o;
  o.request_timeout = options_.scrape_timeout;
  o.max_response_bytes = options_.max_scrape_bytes;
  auto c = kube::Client::FromConfig(target, o);
  if (!c.ok()) {
    ++counters_.scrape_errors;
    return c.error().ToStatus();
  }
  kube::ApiResult<std::string> body = (*c)->GetRaw("/steps");
  if (!body.ok()) {
    ++counters_.scrape_errors;
    return Status::Error("scraping " + pod.ns + "/" + pod.name + " at " + target.server + ": " +
                         body.error().ToString());
  }
  Result<StepsDocument> doc = ParseStepsDocument(*body);
  if (doc.ok() && !doc->pod_uid.empty() && doc->pod_uid != pod.uid) {
    ++counters_.scrape_errors;
    return Status::Error("the exporter at " + target.server + " belongs to pod " + doc->pod_uid +
                         ", not " + pod.ns + "/" + pod.name + " (" + pod.uid +
                         "): the address was reused; skipped");
  }
  return doc;
}

std::chrono::steady_clock::time_point TuningController::Now() const {
  return options_.now ? options_.now() : std::chrono::steady_clock::now();
}

void TuningController::ReconcileAll() {
  // Pods of each (namespace, tuning key), each read once.
  std::map<std::pair<std::string, std::string>, std::vector<TunedPod>> groups;
  for (json& pod : caches_.pods->List()) {
    PodFacts f = PodFactsFromJson(pod);
    if (f.workers <= 0 || f.tuning_key.empty()) continue;
    const std::pair<std::string, std::string> key{f.ns, f.tuning_key};
    groups[key].push_back({std::move(f), std::move(pod)});
  }
  const auto now = Now();
  for (const auto& [key, pods] : groups) {
    std::string pods_version;
    for (const TunedPod& p : pods)
      pods_version += p.facts.uid + "@" +
                      p.object.value("metadata", json::object()).value("resourceVersion", "") + ",";
    auto [it, fresh] = keys_.try_emplace(
        key, KeyState{.backoff = kube::Backoff(options_.backoff_initial, options_.backoff_max)});
    KeyState& state = it->second;
    const bool pods_changed = fresh || pods_version != state.pods_version;
    const bool due = !state.parked && now >= state.due;
    if (!due && (state.backing_off || !pods_changed)) {
      ++counters_.deferred;
      continue;
    }
    state.pods_version = pods_version;
    ReconcileOutcome outcome = ReconcileKey(key.first, key.second, pods);
    if (outcome.ok()) {
      state.parked = state.backing_off = false;
      state.backoff.Reset();
      state.due = now + outcome->requeue_after;
      continue;
    }
    ++counters_.reconcile_errors;
    Log(LogLevel::kWarning, key.first + "/" + key.second + ": " + outcome.error().message +
        (outcome.error().terminal ? " (not retried until its pods change)" : ""));
    state.parked = outcome.error().terminal;
    state.backing_off = !state.parked;
    state.due = now + state.backoff.Next();
  }
  // Keys whose pods are all gone forget their state; a new pod starts afresh.
  std::erase_if(keys_, [&](const auto& entry) { return !groups.count(entry.first); });
  for (const json& gt : caches_.graintunings->List()) {
    const json meta = gt.value("metadata", json::object());
    const std::string key = gt.value("spec", json::object()).value("tuningKey", "");
    if (groups.count({meta.value("namespace", ""), key})) continue;
    if (Forgettable(gt, options_.forget_after, std::time(nullptr))) Forget(gt);
    else MarkAttemptsEnded(gt);
  }
}

void TuningController::Forget(const json& gt) {
  const json meta = gt.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  // Only the object this pass judged: a GrainTuning recreated meanwhile under the name stays.
  kube::ApiResult<json> deleted =
      client_->Delete(kube::resources::kGrainTunings, ns, name, meta.value("uid", ""));
  if (!deleted.ok() && deleted.error().IsConflict()) return;  // a new one took the name: kept
  if (!deleted.ok() && !deleted.error().IsNotFound()) {
    ++counters_.reconcile_errors;
    Log(LogLevel::kError, "deleting GrainTuning " + ns + "/" + name + ": " + deleted.error().ToString());
    return;
  }
  ++counters_.forgotten;
  Log(LogLevel::kInfo, "forgot GrainTuning " + ns + "/" + name + ": no pods and no activity for " +
      std::to_string(options_.forget_after.count()) + " s");
}

void TuningController::MarkAttemptsEnded(const json& gt) {
  const json status = gt.value("status", json::object());
  const std::vector<int> ended = EndedAttempts(status, {});
  if (ended.empty() || json(ended) == status.value("endedAttempts", json::array())) return;
  const json meta = gt.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
  kube::ApiResult<json> written = kube::UpdateWithRetry(
      *client_, kube::resources::kGrainTunings, ns, name, "status", [&](json& latest) {
        json& s = latest["status"];
        if (!s.is_object()) s = json::object();
        s["endedAttempts"] = EndedAttempts(s, {});
        return true;
      });
  if (!written.ok()) {
    ++counters_.reconcile_errors;
    Log(LogLevel::kWarning, "writing status of GrainTuning " + ns + "/" + name + ": " + written.error().ToString());
    return;
  }
  ++counters_.status_writes;
}

ReconcileOutcome TuningController::ReconcileKey(const std::string& ns, const std::string& key,
                                                const std::vector<TunedPod>& pods) {
  ++counters_.reconciles;
  LogLine(LogLevel::kDebug) << "reconcile " << ns << "/" << key << ": " << pods.size() << " pods";
  ReconcileInput in;
  in.ns = ns;
  in.tuning_key = key;
  in.now = NowRfc3339();
  in.warmup_steps = options_.warmup_steps;
  const std::string name = workload::GrainTuningName(key);
  in.grain_tuning = caches_.graintunings->Get(ns, name);
  const TunedPod* newest = nullptr;
  for (const TunedPod& p : pods) {
    in.pods.push_back(p.facts);
    if (!newest || p.facts.attempt >= newest->facts.attempt) newest = &p;
  }

  // The decision inputs, read from the newest pod the way the webhook read them.
  workload::NodeCacheShapes shapes(caches_.nodes);
  workload::ConfigMapSource& configmaps = *caches_.configmaps;
  workload::PolicyCache policies(caches_.policies, caches_.namespaces);
  std::vector<std::string> input_warnings;
  Result<TuningInputs> inputs = workload::ReadPodTuningInputs(
      newest->object, ns, workload::PodInputSources{shapes, configmaps, policies}, input_warnings);
  if (inputs.ok()) {
    in.policy_name = inputs->policy.object_name;
    in.dataset_kind = ToString(inputs->profile.kind);
    in.inputs = std::move(inputs).value();
  }

  // Steps of each attempt still running, from one of its pods.
  std::map<int, bool> scraped;
  for (const PodFacts& p : in.pods) {
    if (p.phase != "Running" || p.pod_ip.empty() || scraped[p.attempt]) continue;
    if (options_.prometheus) {
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
      continue;
    }
    Result<StepsDocument> doc = Scrape(p);
    if (!doc.ok()) {
      Log(LogLevel::kWarning, doc.error());
      continue;
    }
    in.steps[p.attempt] = *doc;
    scraped[p.attempt] = true;
  }

  ReconcileOutput out = ReconcileTuning(in);
  if (!out.problem.empty()) Log(LogLevel::kWarning, ns + "/" + key + ": " + out.problem);
  if (!in.grain_tuning) {
    kube::ApiResult<json> created = client_->Create(kube::resources::kGrainTunings, ns, out.object);
    if (!created.ok() && !created.error().IsAlreadyExists())
      return ErrorOf("creating GrainTuning " + ns + "/" + name, created.error());
    out.status_changed = true;
  }
  if (out.status_changed) {
    kube::ApiResult<json> written = kube::UpdateWithRetry(
        *client_, kube::resources::kGrainTunings, ns, name, "status", [&](json& gt) {
          gt["status"] = out.status;
          return true;
        });
    // Events wait until the status they describe is stored.
    if (!written.ok()) return ErrorOf("writing status of GrainTuning " + ns + "/" + name, written.error());
    ++counters_.status_writes;
  }
  const bool alive = std::any_of(in.pods.begin(), in.pods.end(), [](const PodFacts& p) { return p.Alive(); });
  const ReconcileResult result{alive ? std::chrono::milliseconds(0) : options_.idle_requeue};
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
