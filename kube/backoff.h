// Waiting between retries (with base/backoff.h's Backoff, full jitter) and the conflict-retry
// loop for read-modify-write updates.
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>

#include "base/backoff.h"
#include "kube/api_error.h"
#include "kube/client.h"

namespace graintune::kube {

// Sleeps for `delay` unless stop is requested first; false when stopped.
bool SleepFor(std::chrono::milliseconds delay, std::stop_token stop);

// Read-modify-write with retry on 409 Conflict: GET the object, let `mutate` change it (return
// false to leave it alone), PUT it back (to `subresource`, e.g. "status"). Retries up to
// `attempts` times on Conflict, with backoff; any other error ends it.
ApiResult<Json> UpdateWithRetry(Client& client, const ResourceType& type, const std::string& ns,
                                const std::string& name, const std::string& subresource,
                                const std::function<bool(Json&)>& mutate, int attempts = 8,
                                std::stop_token stop = {});

// The same, starting from `cached` (a copy from an informer, with its resourceVersion) instead
// of a GET: one request when the cache is current, and on 409 Conflict the GET-based retry
// above. What a controller does to write from its cache without reading every object first.
ApiResult<Json> UpdateFromCacheWithRetry(Client& client, const ResourceType& type,
                                         const std::string& ns, const std::string& name,
                                         const std::string& subresource, const Json& cached,
                                         const std::function<bool(Json&)>& mutate,
                                         int attempts = 8, std::stop_token stop = {});

}  // namespace graintune::kube
