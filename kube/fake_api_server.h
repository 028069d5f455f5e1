// FakeApiServer: an in-memory API server behind kube::Client, for unit tests of code that talks
// to Kubernetes (the operator's reconcile shell, informers) without a control plane. It is an
// HttpTransport, so the real Client (paths, JSON, error mapping) runs on top of it:
//
//   auto api = std::make_shared<FakeApiServer>();
//   std::shared_ptr<Client> client = api->NewClient();
//
// What it serves: GET of an object or a collection (all namespaces or one; equality label
// selectors "k=v,k2=v2"; no paging), POST (AlreadyExists on a taken name, generateName), PUT
// (resourceVersion precondition -> 409 Conflict; the status subresource replaces only status,
// the object itself keeps its status), PATCH (merge, strategic merge and server-side apply are
// applied as a JSON merge patch; JSON patch as RFC 6902), DELETE (uid precondition -> 409
// Conflict), and watches (the events after a resourceVersion, then new ones as they happen,
// until the caller stops or the watch's timeoutSeconds passes). Every object gets a uid, a
// resourceVersion from one counter, and a fixed creationTimestamp.
//
// Recording and scripting: every request is recorded (Requests, Count); FailNext makes the next
// matching requests fail with a given HTTP status and metav1.Status reason before they touch
// the store. Paths it cannot read answer 404. Thread-safe; watches run on the caller's thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kube/client.h"
#include "kube/http_transport.h"
#include "kube/resource.h"

namespace graintune::kube {

struct RecordedRequest {
  std::string method;
  std::string path_and_query;
  std::string body;
};

class FakeApiServer : public HttpTransport, public std::enable_shared_from_this<FakeApiServer> {
 public:
  // A Client over this server.
  std::shared_ptr<Client> NewClient(ClientOptions options = {});

  // Stores `object` as the API server would after a create or update (uid and resourceVersion
  // filled in), and tells watches. Returns the stored object.
  Json Put(const ResourceType& type, Json object);
  std::optional<Json> Get(const ResourceType& type, const std::string& ns, const std::string& name) const;

  // The next `times` requests whose method is `method` and whose path starts with `path_prefix`
  // fail with `code` and `reason` (a metav1.Status body); code 0 fails them as a transport error.
  void FailNext(std::string method, std::string path_prefix, int code, std::string reason,
                int times = 1);

  std::vector<RecordedRequest> Requests() const;
  // Recorded requests with this method whose path starts with `path_prefix`.
  int Count(const std::string& method, const std::string& path_prefix) const;

  ApiResult<HttpResponse> Send(const HttpRequest& request, std::stop_token stop) override;
  ApiResult<HttpResponse> Stream(const HttpRequest& request,
                                 const std::function<bool(std::string_view)>& on_chunk,
                                 std::stop_token stop) override;

 private:
  struct Target;
  struct Event {
    long version;
    std::string collection;
    std::string type;  // ADDED, MODIFIED, DELETED
    Json object;
  };
  struct Failure {
    std::string method, path_prefix;
    int code;
    std::string reason;
    int times;
  };
  using Objects = std::map<std::pair<std::string, std::string>, Json>;  // (ns, name) -> object

  // Records the request; the injected failure it meets, if any.
  std::optional<ApiResult<HttpResponse>> Record(const HttpRequest& request);
  HttpResponse Handle(const std::string& method, const Target& target, const std::string& body);
  Json StoreLocked(const std::string& collection, Json object, const std::string& event_type);

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Objects> collections_;  // /api/v1/pods -> objects
  std::vector<Event> events_;
  long version_ = 0;
  long uids_ = 0;
  std::vector<RecordedRequest> requests_;
  std::vector<Failure> failures_;
};

}  // namespace graintune::kube
