#include "operator/exporter_scraper.h"

#include <algorithm>

#include "base/log.h"
#include "kube/client.h"

namespace graintune::op {
namespace {

// Whether `fresh` holds steps `old` did not: another run, steps past its last one, or the end of
// its practice lap (the answer its pods wait for is due).
bool BringsNewSteps(const std::optional<telemetry::StepsDocument>& old, const telemetry::StepsDocument& fresh) {
  const bool lap_ended = fresh.lap && fresh.lap->result;
  if (lap_ended && !(old && old->lap && old->lap->result)) return true;
  if (!old) return !fresh.steps.empty();
  if (fresh.run != old->run) return true;
  const long old_last = old->steps.empty() ? -1 : old->steps.back().step;
  const long new_last = fresh.steps.empty() ? -1 : fresh.steps.back().step;
  return new_last != old_last || fresh.steps.size() != old->steps.size();
}

}  // namespace

Result<telemetry::StepsDocument> FetchExporterSteps(const PodFacts& pod, const ScraperOptions& options,
                                         std::stop_token stop) {
  kube::ClientConfig target;
  target.server = "http://" + pod.pod_ip + ":" + std::to_string(pod.exporter_port);
  target.allow_plain_http = true;
  kube::ClientOptions o;
  o.request_timeout = options.timeout;
  o.max_response_bytes = options.max_bytes;
  auto client = kube::Client::FromConfig(target, o);
  if (!client.ok()) return client.error().ToStatus();
  kube::ApiResult<std::string> body = (*client)->GetRaw("/steps", stop);
  if (!body.ok())
    return Status::Error("scraping " + pod.ns + "/" + pod.name + " at " + target.server + ": " +
                         body.error().ToString());
  Result<telemetry::StepsDocument> doc = telemetry::ParseStepsDocument(*body);
  if (doc.ok() && !doc->pod_uid.empty() && doc->pod_uid != pod.uid)
    doc = Status::Error("rejected: the exporter at " + target.server + " answers for pod " +
                        doc->pod_uid + ", not " + pod.ns + "/" + pod.name + " (" + pod.uid +
                        "): the address was reused, or the pod speaks for another; skipped");
  if (!doc.ok() && options.on_rejected) options.on_rejected(pod, doc.error());
  return doc;
}

ExporterScraper::ExporterScraper(ScraperOptions options, StepsFetch fetch,
                                 std::function<void(const TuningKey&)> on_scraped)
    : options_(std::move(options)), fetch_(std::move(fetch)), on_scraped_(std::move(on_scraped)),
      suspect_slots_(std::max(1, std::max(1, options_.concurrency) / 2)) {
  for (int i = 0; i < std::max(1, options_.concurrency); ++i)
    threads_.emplace_back([this](std::stop_token stop) { Work(stop); });
}

ExporterScraper::~ExporterScraper() {
  for (std::jthread& t : threads_) t.request_stop();
  threads_.clear();  // joins
}

ExporterScraper::Clock::time_point ExporterScraper::Now() const {
  return options_.clock->SteadyNow();
}

std::optional<telemetry::StepsDocument> ExporterScraper::Latest(const TuningKey& key, const PodFacts& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = exporters_.try_emplace(pod.uid);
  Exporter& e = it->second;
  if (added)
    e.backoff = Backoff(BackoffPolicy{.initial = options_.backoff_initial, .max = options_.backoff_max,
                                      .jitter = false});
  e.key = key;
  e.pod = pod;  // the address may have changed
  const Clock::time_point now = Now();
  const bool fresh = e.steps && now - e.read_at < options_.fresh_for;
  if (!fresh && !e.queued && now >= e.retry_at) {
    e.queued = true;
    (e.backoff.failures() > 0 ? suspect_ : healthy_).push_back(pod.uid);
    wake_.notify_one();
  }
  return e.steps;
}

ExporterScraper::Known ExporterScraper::KnownOf(const std::string& pod_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exporters_.find(pod_uid);
  if (it == exporters_.end()) return Known::kNothing;
  if (it->second.steps) return Known::kRead;
  return it->second.backoff.failures() > 0 ? Known::kFailing : Known::kNothing;
}

std::optional<telemetry::StepsDocument> ExporterScraper::Peek(const std::string& pod_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exporters_.find(pod_uid);
  if (it == exporters_.end()) return std::nullopt;
  return it->second.steps;
}

void ExporterScraper::Forget(const std::string& pod_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  exporters_.erase(pod_uid);  // a scrape in flight finds no entry and is dropped
}

ScraperFigures ExporterScraper::Figures() const {
  std::lock_guard<std::mutex> lock(mu_);
  ScraperFigures f{.scrapes = scrapes_, .failures = failures_, .in_flight = running_};
  for (const auto& [uid, e] : exporters_)
    if (e.backoff.failures() > 0) ++f.backing_off;
  return f;
}

std::optional<std::string> ExporterScraper::NextLocked() {
  for (;;) {
    std::deque<std::string>* from = nullptr;
    if (!healthy_.empty()) from = &healthy_;
    else if (!suspect_.empty() && running_suspect_ < suspect_slots_) from = &suspect_;
    if (!from) return std::nullopt;
    std::string uid = std::move(from->front());
    from->pop_front();
    if (exporters_.count(uid)) return uid;  // else forgotten while queued
  }
}

void ExporterScraper::Work(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop.stop_requested()) {
    std::optional<std::string> uid;
    wake_.wait(lock, stop, [&] { return (uid = NextLocked()).has_value(); });
    if (!uid) return;  // stopped
    const Exporter& e = exporters_.at(*uid);
    const bool suspect = e.backoff.failures() > 0;
    const PodFacts pod = e.pod;
    ++running_;
    if (suspect) ++running_suspect_;
    lock.unlock();
    const Clock::time_point start = Now();
    Result<telemetry::StepsDocument> result = fetch_(pod, options_, stop);
    const Clock::duration took = Now() - start;
    const bool stopping = stop.stop_requested();
    Finish(*uid, std::move(result), took, suspect, /*record=*/!stopping);
    if (stopping) return;
    lock.lock();
  }
}

void ExporterScraper::Finish(const std::string& uid, Result<telemetry::StepsDocument> result,
                             Clock::duration took, bool suspect, bool record) {
  if (record && options_.observe) options_.observe(took, result.ok());
  std::optional<TuningKey> changed;
  {
    // The read leaves the in-flight count under the same lock that records its answer: a
    // reader that sees no read in flight also sees every answer (a caller deciding which
    // exporters to ask next never sees a finished read as neither running nor failed).
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    if (suspect) --running_suspect_;
    wake_.notify_all();  // a suspect slot may be free
    if (!record) return;
    ++scrapes_;
    if (!result.ok()) ++failures_;
    auto it = exporters_.find(uid);
    if (it == exporters_.end()) return;  // the pod went meanwhile
    Exporter& e = it->second;
    e.queued = false;
    if (!result.ok()) {
      const std::chrono::milliseconds doubled = e.backoff.Next();
      // An exporter never read yet is most likely still starting (its pod runs before the
      // sidecar listens, or its address is not routed yet): retried at the first interval, so
      // its first steps are not held back by a doubling wait. Once read, failures double it.
      const std::chrono::milliseconds wait =
          e.steps ? doubled : options_.backoff_initial;
      e.retry_at = Now() + wait;
      Log(LogLevel::kWarning, result.error() + " (failure " + std::to_string(e.backoff.failures()) +
                                  " in a row; next try in " + std::to_string(wait.count()) + " ms)");
      return;
    }
    e.backoff.Reset();
    e.retry_at = {};
    if (BringsNewSteps(e.steps, *result)) changed = e.key;
    e.steps = std::move(result).value();
    e.read_at = Now();
  }
  if (changed && on_scraped_) on_scraped_(*changed);
}

}  // namespace graintune::op
