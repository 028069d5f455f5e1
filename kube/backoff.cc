#include "kube/backoff.h"

#include <condition_variable>
#include <mutex>

namespace graintune::kube {

bool SleepFor(std::chrono::milliseconds delay, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  return !cv.wait_for(lock, stop, delay, [] { return false; }) && !stop.stop_requested();
}

ApiResult<Json> UpdateWithRetry(Client& client, const ResourceType& type, const std::string& ns,
                                const std::string& name, const std::string& subresource,
                                const std::function<bool(Json&)>& mutate, int attempts,
                                std::stop_token stop) {
  Backoff backoff(std::chrono::milliseconds(20), std::chrono::seconds(2));
  ApiError last{409, "Conflict", "no attempt made"};
  for (int i = 0; i < attempts; ++i) {
    ApiResult<Json> current = client.Get(type, ns, name, stop);
    if (!current.ok()) return current.error();
    Json object = *current;
    if (!mutate(object)) return *current;
    ApiResult<Json> written = client.Replace(type, ns, object, subresource, stop);
    if (written.ok() || !written.error().IsConflict()) return written;
    last = written.error();
    if (!SleepFor(backoff.Next(), stop)) return ApiError{0, "Cancelled", "stopped"};
  }
  last.message = "still conflicting after " + std::to_string(attempts) + " attempts: " + last.message;
  return last;
}

ApiResult<Json> UpdateFromCacheWithRetry(Client& client, const ResourceType& type,
                                         const std::string& ns, const std::string& name,
                                         const std::string& subresource, const Json& cached,
                                         const std::function<bool(Json&)>& mutate, int attempts,
                                         std::stop_token stop) {
  Json object = cached;
  if (!mutate(object)) return cached;
  ApiResult<Json> written = client.Replace(type, ns, object, subresource, stop);
  if (written.ok() || !written.error().IsConflict() || attempts <= 1) return written;
  return UpdateWithRetry(client, type, ns, name, subresource, mutate, attempts - 1, stop);
}

}  // namespace graintune::kube
