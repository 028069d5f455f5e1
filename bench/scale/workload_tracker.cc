#include "bench/scale/workload_tracker.h"

#include <algorithm>

#include "bench/scale/scale_cluster.h"
#include "kube/backoff.h"
#include "operator/pod_facts.h"

namespace graintune::bench {

using kube::Json;

WorkloadTracker::WorkloadTracker(std::shared_ptr<kube::Client> client, const std::string& ns,
                                 ExporterStandIn& standin, std::map<std::string, int> pods_per_key)
    : client_(std::move(client)), standin_(standin), pods_per_key_(std::move(pods_per_key)) {
  pods_ = std::make_unique<kube::Informer>(
      client_, kube::resources::kPods,
      kube::InformerOptions{.ns = ns, .label_selector = "graintune.dev/managed=true"});
  auto on_tuning = [this](const Json& gt) { OnTuning(gt); };
  tunings_ = std::make_unique<kube::Informer>(
      client_, kube::resources::kGrainTunings, kube::InformerOptions{.ns = ns},
      kube::InformerHandlers{.on_add = on_tuning,
                             .on_update = [on_tuning](const Json&, const Json& now) { on_tuning(now); }});
}

WorkloadTracker::~WorkloadTracker() { Stop(); }

void WorkloadTracker::Start() {
  pods_->Start();
  tunings_->Start();
  thread_ = std::jthread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      Sync();
      kube::SleepFor(std::chrono::milliseconds(250), stop);
    }
  });
}

void WorkloadTracker::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  pods_->Stop();
  tunings_->Stop();
}

void WorkloadTracker::SetBadExporters(bool bad) {
  std::lock_guard<std::mutex> lock(mu_);
  bad_ = bad;
}

void WorkloadTracker::OnTuning(const Json& gt) {
  const std::string key = gt.value("spec", Json::object()).value("tuningKey", "");
  const Json status = gt.value("status", Json::object());
  const int attempt = status.value("recommendation", Json::object()).value("attempt", -1);
  std::lock_guard<std::mutex> lock(mu_);
  tuning_updates_.push_back(std::chrono::steady_clock::now());
  if (attempt >= 0) recommended_[key].try_emplace(attempt, std::chrono::steady_clock::now());
}

void WorkloadTracker::Sync() {
  const SteadyTime now = std::chrono::steady_clock::now();
  std::map<std::string, size_t> running;  // uid -> index in pods and facts
  std::map<std::pair<std::string, int>, int> running_per_attempt;
  const std::vector<Json> pods = pods_->List();
  std::vector<op::PodFacts> facts;
  for (const Json& p : pods) facts.push_back(op::PodFactsFromJson(p));
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < pods.size(); ++i) {
    const op::PodFacts& f = facts[i];
    if (f.phase != "Running" || f.pod_ip.empty() || f.terminating) continue;
    running[f.uid] = i;
    ++running_per_attempt[{f.tuning_key, f.attempt}];
  }
  // Gone pods first: KWOK hands a restarted pod's address to a new one, which could not listen
  // there while the old pod's stand-in still did.
  for (auto it = served_.begin(); it != served_.end();) {
    if (running.count(*it)) {
      ++it;
      continue;
    }
    standin_.Remove(*it);
    it = served_.erase(it);
  }
  for (const auto& [uid, i] : running) {
    if (served_.count(uid)) continue;
    const op::PodFacts& f = facts[i];
    const int index = PodIndexInWorkload(pods[i]);
    ExporterBehaviour b = ExporterBehaviour::kServes;
    if (bad_ && BadIndex(index))
      b = (index / 10) % 2 == 0 ? ExporterBehaviour::kBlackholed : ExporterBehaviour::kSlow;
    if (Status s = standin_.Add({.uid = f.uid, .ip = f.pod_ip, .port = f.exporter_port,
                                 .key = f.tuning_key, .attempt = f.attempt, .behaviour = b});
        !s.ok()) {
      // Retried at the next sync.
      if (errors_.size() < 20) errors_.push_back(s.message());
      continue;
    }
    served_.insert(f.uid);
  }
  for (const auto& [key_attempt, count] : running_per_attempt) {
    auto want = pods_per_key_.find(key_attempt.first);
    if (want == pods_per_key_.end() || count < want->second) continue;
    if (started_[key_attempt.first].insert(key_attempt.second).second)
      standin_.StartAttempt(key_attempt.first, key_attempt.second, now);
  }
}

int WorkloadTracker::WorkloadsRunning(int attempt) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(started_.begin(), started_.end(),
                                        [&](const auto& e) { return e.second.count(attempt) > 0; }));
}

std::vector<std::string> WorkloadTracker::WorkloadsNotRunning(int attempt) const {
  std::set<std::string> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, pods] : pods_per_key_) {
      auto it = started_.find(key);
      if (it == started_.end() || it->second.count(attempt) == 0) missing.insert(key);
    }
  }
  std::map<std::string, std::map<std::string, int>> phases;  // key -> "attempt A PHASE" -> pods
  for (const Json& p : pods_->List()) {
    const op::PodFacts f = op::PodFactsFromJson(p);
    if (!missing.count(f.tuning_key)) continue;
    const std::string phase = f.terminating ? "Terminating" : f.phase.empty() ? "no phase" : f.phase;
    ++phases[f.tuning_key]["attempt " + std::to_string(f.attempt) + " " + phase];
  }
  std::vector<std::string> out;
  for (const std::string& key : missing) {
    std::string line = key + ":";
    for (const auto& [what, count] : phases[key]) line += " " + what + " " + std::to_string(count) + ",";
    if (phases[key].empty()) line += " no pods";
    else line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::set<std::string> WorkloadTracker::RetriesNumberedAsBefore(int attempt) const {
  std::set<std::string> single_not_running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, pods] : pods_per_key_) {
      auto it = started_.find(key);
      if (pods == 1 && (it == started_.end() || it->second.count(attempt) == 0)) single_not_running.insert(key);
    }
  }
  std::map<std::string, std::set<int>> running, failed;  // key -> attempts
  for (const Json& p : pods_->List()) {
    const op::PodFacts f = op::PodFactsFromJson(p);
    if (!single_not_running.count(f.tuning_key) || f.attempt >= attempt) continue;
    if (f.phase == "Running" && !f.terminating) running[f.tuning_key].insert(f.attempt);
    if (f.phase == "Failed") failed[f.tuning_key].insert(f.attempt);
  }
  std::set<std::string> out;
  for (const auto& [key, attempts] : running)
    for (int a : attempts)
      if (failed[key].count(a)) out.insert(key);
  return out;
}

std::vector<Json> WorkloadTracker::OneRunningPodPerWorkload() const {
  std::map<std::string, std::pair<int, Json>> newest;  // key -> (attempt, pod)
  for (const Json& p : pods_->List()) {
    const op::PodFacts f = op::PodFactsFromJson(p);
    if (f.phase != "Running" || f.terminating) continue;
    auto it = newest.find(f.tuning_key);
    if (it == newest.end() || it->second.first < f.attempt) newest[f.tuning_key] = {f.attempt, p};
  }
  std::vector<Json> out;
  for (auto& [key, entry] : newest) out.push_back(std::move(entry.second));
  return out;
}

std::optional<SteadyTime> WorkloadTracker::RecommendedAt(const std::string& key, int attempt) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = recommended_.find(key);
  if (it == recommended_.end()) return std::nullopt;
  std::optional<SteadyTime> first;
  for (auto a = it->second.lower_bound(attempt); a != it->second.end(); ++a)
    if (!first || a->second < *first) first = a->second;
  return first;
}

long WorkloadTracker::TuningUpdatesBetween(SteadyTime from, SteadyTime to) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::count_if(tuning_updates_.begin(), tuning_updates_.end(),
                       [&](SteadyTime t) { return t >= from && t < to; });
}

std::vector<std::string> WorkloadTracker::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

}  // namespace graintune::bench
