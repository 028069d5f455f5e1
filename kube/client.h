// A Kubernetes API client with the verbs graintune uses, over JSON objects (nlohmann::json):
// get, paginated list, create, replace, patch (merge, JSON, server-side apply), status updates,
// delete, watch. Not a code-generated typed client: callers read the few fields they need.
//
// Contract: thread-safe; every call is bounded by a timeout and a response-size cap and can be
// stopped; errors are ApiError values that keep the API server's Status reason and message.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kube/api_error.h"
#include "kube/config.h"
#include "kube/http_transport.h"
#include "kube/resource.h"

namespace graintune::kube {

using Json = nlohmann::json;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int page_size = 500;  // limit per request; continue tokens are followed
};

struct ObjectList {
  std::vector<Json> items;
  std::string resource_version;  // of the list, to start a watch from
};

enum class PatchType { kMerge, kJson, kStrategicMerge };

struct WatchOptions {
  std::string resource_version;  // start after this version (empty: from "now" plus a synthetic list)
  std::string label_selector;
  std::string field_selector;
  int timeout_seconds = 300;     // the server ends the stream after this; callers re-watch
  bool allow_bookmarks = true;
};

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  Json object;
};

// How a watch ended when it ended without an error: the server closed it (timeout), or the
// handler asked to stop. last_resource_version is the newest version seen, to resume from.
struct WatchEnd {
  std::string last_resource_version;
  bool stopped_by_handler = false;
};

struct ClientOptions {
  std::chrono::milliseconds request_timeout{30000};
  size_t max_response_bytes = 64u << 20;
  size_t max_watch_event_bytes = 16u << 20;
  std::string field_manager = "graintune";
};

class Client {
 public:
  Client(std::shared_ptr<HttpTransport> transport, ClientOptions options = {});
  static ApiResult<std::shared_ptr<Client>> FromConfig(const ClientConfig& config,
                                                       ClientOptions options = {});

  ApiResult<Json> Get(const ResourceType& type, const std::string& ns, const std::string& name,
                      std::stop_token stop = {});
  ApiResult<ObjectList> List(const ResourceType& type, const std::string& ns,
                             const ListOptions& options = {}, std::stop_token stop = {});
  ApiResult<Json> Create(const ResourceType& type, const std::string& ns, const Json& object,
                         std::stop_token stop = {});
  // POST to a subresource of an object (serviceaccounts/NAME/token, pods/NAME/eviction).
  ApiResult<Json> CreateSubresource(const ResourceType& type, const std::string& ns,
                                    const std::string& name, const std::string& subresource,
                                    const Json& body, std::stop_token stop = {});
  // PUT; the object's metadata.resourceVersion makes it conditional (409 Conflict when stale).
  ApiResult<Json> Replace(const ResourceType& type, const std::string& ns, const Json& object,
                          const std::string& subresource = "", std::stop_token stop = {});
  ApiResult<Json> Patch(const ResourceType& type, const std::string& ns, const std::string& name,
                        PatchType patch_type, const Json& patch,
                        const std::string& subresource = "", std::stop_token stop = {});
  // Server-side apply under the client's field manager.
  ApiResult<Json> Apply(const ResourceType& type, const std::string& ns, const Json& object,
                        bool force = true, const std::string& subresource = "",
                        std::stop_token stop = {});
  // `uid`, when given, is a precondition: an object of that name with another uid is not
  // deleted (409 Conflict).
  ApiResult<Json> Delete(const ResourceType& type, const std::string& ns, const std::string& name,
                         const std::string& uid = "", std::stop_token stop = {});
  // Streams events to on_event until the server ends the stream, on_event returns false, or
  // stop is requested. An ERROR event (e.g. 410 Gone: the version is too old) ends the watch
  // with that error.
  ApiResult<WatchEnd> Watch(const ResourceType& type, const std::string& ns,
                            const WatchOptions& options,
                            const std::function<bool(const WatchEvent&)>& on_event,
                            std::stop_token stop = {});
  // GET of a raw path (/readyz, /version); the body as text.
  ApiResult<std::string> GetRaw(const std::string& path, std::stop_token stop = {});

  const ClientOptions& options() const { return options_; }

 private:
  ApiResult<Json> Call(const std::string& method, const std::string& path, const std::string& body,
                       const std::string& content_type, std::stop_token stop);

  std::shared_ptr<HttpTransport> transport_;
  ClientOptions options_;
};

// The API server's answer for a non-2xx response: its metav1.Status when the body is one.
ApiError ErrorFromResponse(int http_status, const std::string& body);

}  // namespace graintune::kube
