#include "kube/fake_api_server.h"

#include <chrono>
#include <sstream>

namespace graintune::kube {
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string PercentDecode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

HttpResponse StatusResponse(int code, const std::string& reason, const std::string& message) {
  const Json status = {{"kind", "Status"},     {"apiVersion", "v1"}, {"status", "Failure"},
                       {"message", message}, {"reason", reason},   {"code", code}};
  return {code, status.dump()};
}

bool LabelsMatch(const Json& object, const std::string& selector) {
  const Json labels = object.value("metadata", Json::object()).value("labels", Json::object());
  for (const std::string& term : Split(selector, ',')) {
    const size_t eq = term.find('=');
    if (eq == std::string::npos) return false;  // only equality selectors are served
    const std::string key = term.substr(0, eq), value = term.substr(eq + 1);
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
}

std::string NsOf(const Json& object) {
  return object.value("metadata", Json::object()).value("namespace", "");
}

}  // namespace

// A request path read as the API server reads it.
struct FakeApiServer::Target {
  std::string collection;  // /api/v1/pods, /apis/graintune.dev/v1alpha1/graintunings
  std::string ns, name, subresource;
  std::map<std::string, std::string> query;
  bool ok = false;

  explicit Target(const std::string& path_and_query) {
    const size_t q = path_and_query.find('?');
    const std::vector<std::string> segs = Split(path_and_query.substr(0, q), '/');
    if (q != std::string::npos)
      for (const std::string& kv : Split(path_and_query.substr(q + 1), '&')) {
        const size_t eq = kv.find('=');
        query[kv.substr(0, eq)] = eq == std::string::npos ? "" : PercentDecode(kv.substr(eq + 1));
      }
    size_t prefix = segs.empty() ? 0 : segs[0] == "api" ? 2 : segs[0] == "apis" ? 3 : 0;
    if (prefix == 0 || segs.size() <= prefix) return;
    std::vector<std::string> rest(segs.begin() + static_cast<long>(prefix), segs.end());
    if (rest.size() >= 3 && rest[0] == "namespaces") {
      ns = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    }
    collection = "";
    for (size_t i = 0; i < prefix; ++i) collection += "/" + segs[i];
    collection += "/" + rest[0];
    if (rest.size() > 1) name = rest[1];
    if (rest.size() > 2) subresource = rest[2];
    ok = rest.size() <= 3;
  }
};

std::shared_ptr<Client> FakeApiServer::NewClient(ClientOptions options) {
  return std::make_shared<Client>(shared_from_this(), std::move(options));
}

Json FakeApiServer::StoreLocked(const std::string& collection, Json object,
                                const std::string& event_type) {
  Json& meta = object["metadata"];
  if (!meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(++uids_);
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
  meta["resourceVersion"] = std::to_string(++version_);
  collections_[collection][{NsOf(object), meta.value("name", "")}] = object;
  events_.push_back({version_, collection, event_type, object});
  changed_.notify_all();
  return object;
}

Json FakeApiServer::Put(const ResourceType& type, Json object) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string collection = CollectionPath(type, "");
  const auto key = std::pair{NsOf(object), object.value("metadata", Json::object()).value("name", "")};
  const bool exists = collections_[collection].count(key) > 0;
  if (exists && !object["metadata"].contains("uid"))
    object["metadata"]["uid"] = collections_[collection][key]["metadata"]["uid"];
  return StoreLocked(collection, std::move(object), exists ? "MODIFIED" : "ADDED");
}

std::optional<Json> FakeApiServer::Get(const ResourceType& type, const std::string& ns,
                                       const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = collections_.find(CollectionPath(type, ""));
  if (c == collections_.end()) return std::nullopt;
  auto it = c->second.find({type.namespaced ? ns : "", name});
  if (it == c->second.end()) return std::nullopt;
  return it->second;
}

void FakeApiServer::FailNext(std::string method, std::string path_prefix, int code,
                             std::string reason, int times) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.push_back({std::move(method), std::move(path_prefix), code, std::move(reason), times});
}

std::vector<RecordedRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int FakeApiServer::Count(const std::string& method, const std::string& path_prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const RecordedRequest& r : requests_)
    if (r.method == method && r.path_and_query.rfind(path_prefix, 0) == 0) ++n;
  return n;
}

std::optional<ApiResult<HttpResponse>> FakeApiServer::Record(const HttpRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.push_back({request.method, request.path_and_query, request.body});
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (it->method != request.method || request.path_and_query.rfind(it->path_prefix, 0) != 0)
      continue;
    const Failure f = *it;
    if (--it->times <= 0) failures_.erase(it);
    if (f.code == 0) return ApiResult<HttpResponse>(ApiError{0, f.reason, "injected transport failure"});
    return ApiResult<HttpResponse>(StatusResponse(f.code, f.reason, "injected failure"));
  }
  return std::nullopt;
}

ApiResult<HttpResponse> FakeApiServer::Send(const HttpRequest& request, std::stop_token) {
  if (std::optional<ApiResult<HttpResponse>> failure = Record(request)) return *failure;
  const Target target(request.path_and_query);
  if (!target.ok) return StatusResponse(404, "NotFound", "the fake serves no " + request.path_and_query);
  std::lock_guard<std::mutex> lock(mu_);
  return Handle(request.method, target, request.body);
}

HttpResponse FakeApiServer::Handle(const std::string& method, const Target& t,
                                   const std::string& body) {
  Objects& objects = collections_[t.collection];
  const std::pair<std::string, std::string> key{t.ns, t.name};
  const Json parsed = Json::parse(body.empty() ? "null" : body, nullptr, false);
  if (method == "GET" && t.name.empty()) {
    Json items = Json::array();
    for (const auto& [k, object] : objects)
      if ((t.ns.empty() || k.first == t.ns) &&
          (!t.query.count("labelSelector") || LabelsMatch(object, t.query.at("labelSelector"))))
        items.push_back(object);
    return {200, Json{{"metadata", {{"resourceVersion", std::to_string(version_)}}},
                      {"items", items}}.dump()};
  }
  auto it = objects.find(key);
  if (method == "POST") {
    if (!parsed.is_object()) return StatusResponse(400, "BadRequest", "the body is not an object");
    Json object = parsed;
    Json& meta = object["metadata"];
    if (!meta.contains("name") && meta.contains("generateName"))
      meta["name"] = meta["generateName"].get<std::string>() + std::to_string(uids_ + 1);
    if (!t.ns.empty()) meta["namespace"] = t.ns;
    meta.erase("resourceVersion");
    meta.erase("uid");
    const std::string name = meta.value("name", "");
    if (name.empty()) return StatusResponse(422, "Invalid", "metadata.name is required");
    if (objects.count({t.ns, name}))
      return StatusResponse(409, "AlreadyExists", t.collection + " \"" + name + "\" already exists");
    return {201, StoreLocked(t.collection, std::move(object), "ADDED").dump()};
  }
  if (it == objects.end())
    return StatusResponse(404, "NotFound", t.collection + " \"" + t.name + "\" not found");
  Json stored = it->second;
  if (method == "GET") return {200, stored.dump()};
  if (method == "DELETE") {
    const std::string uid = parsed.is_object()
                                ? parsed.value("preconditions", Json::object()).value("uid", "")
                                : "";
    if (!uid.empty() && uid != stored["metadata"].value("uid", ""))
      return StatusResponse(409, "Conflict", "the uid precondition failed");
    objects.erase(it);
    events_.push_back({++version_, t.collection, "DELETED", stored});
    changed_.notify_all();
    return {200, stored.dump()};
  }
  if (!parsed.is_object() && !(method == "PATCH" && parsed.is_array()))
    return StatusResponse(400, "BadRequest", "the body is not an object");
  Json updated = stored;
  if (method == "PUT") {
    const std::string rv = parsed.value("metadata", Json::object()).value("resourceVersion", "");
    if (!rv.empty() && rv != stored["metadata"].value("resourceVersion", ""))
      return StatusResponse(409, "Conflict", "the object has been modified");
    if (t.subresource == "status") {
      updated["status"] = parsed.value("status", Json::object());
    } else {
      updated = parsed;
      if (stored.contains("status")) updated["status"] = stored["status"];
      updated["metadata"]["uid"] = stored["metadata"]["uid"];
    }
  } else if (method == "PATCH") {
    if (parsed.is_array()) {
      try {
        updated = stored.patch(parsed);
      } catch (const Json::exception& e) {
        return StatusResponse(422, "Invalid", e.what());
      }
    } else {
      updated.merge_patch(parsed);
    }
  } else {
    return StatusResponse(405, "MethodNotAllowed", method);
  }
  updated["metadata"]["name"] = t.name;
  if (!t.ns.empty()) updated["metadata"]["namespace"] = t.ns;
  return {200, StoreLocked(t.collection, std::move(updated), "MODIFIED").dump()};
}

ApiResult<HttpResponse> FakeApiServer::Stream(const HttpRequest& request,
                                              const std::function<bool(std::string_view)>& on_chunk,
                                              std::stop_token stop) {
  if (std::optional<ApiResult<HttpResponse>> failure = Record(request)) return *failure;
  const Target t(request.path_and_query);
  if (!t.ok) return StatusResponse(404, "NotFound", "the fake serves no " + request.path_and_query);
  long after = 0;
  if (t.query.count("resourceVersion") && !t.query.at("resourceVersion").empty())
    after = std::stol(t.query.at("resourceVersion"));
  const int timeout_seconds =
      t.query.count("timeoutSeconds") ? std::stoi(t.query.at("timeoutSeconds")) : 300;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  const std::string selector = t.query.count("labelSelector") ? t.query.at("labelSelector") : "";
  size_t next = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    std::string chunk;
    for (; next < events_.size(); ++next) {
      const Event& e = events_[next];
      if (e.version <= after || e.collection != t.collection) continue;
      if (!t.ns.empty() && NsOf(e.object) != t.ns) continue;
      if (!selector.empty() && !LabelsMatch(e.object, selector)) continue;
      chunk += Json{{"type", e.type}, {"object", e.object}}.dump() + "\n";
    }
    if (!chunk.empty()) {
      lock.unlock();
      const bool more = on_chunk(chunk);
      lock.lock();
      if (!more) return HttpResponse{200, ""};
    }
    if (stop.stop_requested()) return ApiError{0, "Cancelled", "the watch was stopped"};
    if (std::chrono::steady_clock::now() >= deadline) return HttpResponse{200, ""};
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace graintune::kube
