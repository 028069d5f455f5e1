#include "kube/client.h"

#include <string_view>

namespace graintune::kube {
namespace {

std::string ReasonForCode(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "Unknown";
  }
}

std::string Join(const std::string& path, const std::vector<std::string>& params) {
  std::string out = path;
  char sep = '?';
  for (const std::string& p : params) {
    out += sep + p;
    sep = '&';
  }
  return out;
}

}  // namespace

ApiError ErrorFromResponse(int http_status, const std::string& body) {
  ApiError e{http_status, ReasonForCode(http_status), ""};
  const Json status = Json::parse(body, nullptr, false);
  if (status.is_object() && status.value("kind", "") == "Status") {
    if (status.contains("reason") && status["reason"].is_string() &&
        !status["reason"].get<std::string>().empty())
      e.reason = status["reason"].get<std::string>();
    if (status.contains("message") && status["message"].is_string())
      e.message = status["message"].get<std::string>();
  }
  if (e.message.empty()) e.message = body.substr(0, 512);
  return e;
}

Client::Client(std::shared_ptr<HttpTransport> transport, ClientOptions options)
    : transport_(std::move(transport)), options_(std::move(options)) {}

ApiResult<std::shared_ptr<Client>> Client::FromConfig(const ClientConfig& config,
                                                      ClientOptions options) {
  ApiResult<std::shared_ptr<HttpTransport>> t = NewCpprestTransport(config);
  if (!t.ok()) return t.error();
  return std::make_shared<Client>(*t, std::move(options));
}

ApiResult<Json> Client::Call(const std::string& method, const std::string& path,
                             const std::string& body, const std::string& content_type,
                             std::stop_token stop) {
  HttpRequest req;
  req.method = method;
  req.path_and_query = path;
  req.body = body;
  req.content_type = content_type;
  req.timeout = options_.request_timeout;
  req.max_response_bytes = options_.max_response_bytes;
  ApiResult<HttpResponse> resp = transport_->Send(req, stop);
  if (!resp.ok()) return resp.error();
  if (resp->status < 200 || resp->status >= 300) return ErrorFromResponse(resp->status, resp->body);
  Json parsed = Json::parse(resp->body, nullptr, false);
  if (parsed.is_discarded())
    return ApiError{resp->status, "BadResponse", method + " " + path + ": the body is not JSON"};
  return parsed;
}

ApiResult<Json> Client::Get(const ResourceType& type, const std::string& ns,
                            const std::string& name, std::stop_token stop) {
  return Call("GET", ObjectPath(type, ns, name), "", "", stop);
}

ApiResult<ObjectList> Client::List(const ResourceType& type, const std::string& ns,
                                   const ListOptions& options, std::stop_token stop) {
  ObjectList out;
  std::string cont;
  do {
    std::vector<std::string> params;
    if (options.page_size > 0) params.push_back("limit=" + std::to_string(options.page_size));
    if (!cont.empty()) params.push_back("continue=" + EncodeQueryValue(cont));
    if (!options.label_selector.empty())
      params.push_back("labelSelector=" + EncodeQueryValue(options.label_selector));
    if (!options.field_selector.empty())
      params.push_back("fieldSelector=" + EncodeQueryValue(options.field_selector));
    ApiResult<Json> page = Call("GET", Join(CollectionPath(type, ns), params), "", "", stop);
    if (!page.ok()) return page.error();
    if (!page->contains("items") || !(*page)["items"].is_array())
      return ApiError{200, "BadResponse", "list of " + type.plural + " has no items"};
    for (Json& item : (*page)["items"]) {
      // Items of a list carry no kind/apiVersion; add them so objects look alike everywhere.
      item["kind"] = type.kind;
      item["apiVersion"] = type.ApiVersion();
      out.items.push_back(std::move(item));
    }
    const Json meta = page->value("metadata", Json::object());
    out.resource_version = meta.value("resourceVersion", "");
    cont = meta.value("continue", "");
  } while (!cont.empty());
  return out;
}

ApiResult<Json> Client::Create(const ResourceType& type, const std::string& ns,
                               const Json& object, std::stop_token stop) {
  return Call("POST", CollectionPath(type, ns), object.dump(), "application/json", stop);
}

ApiResult<Json> Client::CreateSubresource(const ResourceType& type, const std::string& ns,
                                          const std::string& name,
                                          const std::string& subresource, const Json& body,
                                          std::stop_token stop) {
  return Call("POST", ObjectPath(type, ns, name, subresource), body.dump(), "application/json",
              stop);
}

ApiResult<Json> Client::Replace(const ResourceType& type, const std::string& ns,
                                const Json& object, const std::string& subresource,
                                std::stop_token stop) {
  const std::string name = object.value("metadata", Json::object()).value("name", "");
  if (name.empty()) return ApiError{0, "Invalid", "replace: the object has no metadata.name"};
  return Call("PUT", ObjectPath(type, ns, name, subresource), object.dump(), "application/json",
              stop);
}

ApiResult<Json> Client::Patch(const ResourceType& type, const std::string& ns,
                              const std::string& name, PatchType patch_type, const Json& patch,
                              const std::string& subresource, std::stop_token stop) {
  const char* content_type = patch_type == PatchType::kMerge ? "application/merge-patch+json"
                             : patch_type == PatchType::kJson
                                 ? "application/json-patch+json"
                                 : "application/strategic-merge-patch+json";
  return Call("PATCH", ObjectPath(type, ns, name, subresource), patch.dump(), content_type, stop);
}

ApiResult<Json> Client::Apply(const ResourceType& type, const std::string& ns,
                              const Json& object, bool force, const std::string& subresource,
                              std::stop_token stop) {
  const std::string name = object.value("metadata", Json::object()).value("name", "");
  if (name.empty()) return ApiError{0, "Invalid", "apply: the object has no metadata.name"};
  std::string path = ObjectPath(type, ns, name, subresource) +
                     "?fieldManager=" + EncodeQueryValue(options_.field_manager);
  if (force) path += "&force=true";
  return Call("PATCH", path, object.dump(), "application/apply-patch+yaml", stop);
}

ApiResult<Json> Client::Delete(const ResourceType& type, const std::string& ns,
                               const std::string& name, const std::string& uid, std::stop_token stop) {
  // Background propagation: a Job's pods go with it, as with kubectl delete.
  Json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
  return Call("DELETE", ObjectPath(type, ns, name), options.dump(), "application/json", stop);
}

ApiResult<std::string> Client::GetRaw(const std::string& path, std::stop_token stop) {
  HttpRequest req;
  req.path_and_query = path;
  req.accept = "*/*";
  req.timeout = options_.request_timeout;
  req.max_response_bytes = options_.max_response_bytes;
  ApiResult<HttpResponse> resp = transport_->Send(req, stop);
  if (!resp.ok()) return resp.error();
  if (resp->status < 200 || resp->status >= 300) return ErrorFromResponse(resp->status, resp->body);
  return resp->body;
}

ApiResult<WatchEnd> Client::Watch(const ResourceType& type, const std::string& ns,
                                  const WatchOptions& options,
                                  const std::function<bool(const WatchEvent&)>& on_event,
                                  std::stop_token stop) {
  std::vector<std::string> params = {"watch=1",
                                     "timeoutSeconds=" + std::to_string(options.timeout_seconds)};
  if (options.allow_bookmarks) params.push_back("allowWatchBookmarks=true");
  if (!options.resource_version.empty())
    params.push_back("resourceVersion=" + EncodeQueryValue(options.resource_version));
  if (!options.label_selector.empty())
    params.push_back("labelSelector=" + EncodeQueryValue(options.label_selector));
  if (!options.field_selector.empty())
    params.push_back("fieldSelector=" + EncodeQueryValue(options.field_selector));
  HttpRequest req;
  req.path_and_query = Join(CollectionPath(type, ns), params);
  // The server ends the stream after timeout_seconds; silence much longer than that means the
  // connection is gone.
  req.timeout = std::chrono::seconds(options.timeout_seconds + 30);
  req.max_response_bytes = options_.max_response_bytes;

  WatchEnd end;
  end.last_resource_version = options.resource_version;
  std::optional<ApiError> failure;
  std::string pending;  // bytes of an event line not yet complete
  auto on_chunk = [&](std::string_view chunk) {
    pending.append(chunk);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (line.empty()) continue;
      Json parsed = Json::parse(line, nullptr, false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        failure = ApiError{200, "BadResponse", "watch of " + type.plural + ": a line is not JSON"};
        return false;
      }
      WatchEvent event{parsed.value("type", ""), parsed.value("object", Json::object())};
      if (event.type == "ERROR") {
        failure = ErrorFromResponse(event.object.value("code", 500), event.object.dump());
        return false;
      }
      const std::string rv =
          event.object.value("metadata", Json::object()).value("resourceVersion", "");
      if (!rv.empty()) end.last_resource_version = rv;
      if (event.type == "BOOKMARK") continue;
      event.object["kind"] = type.kind;
      event.object["apiVersion"] = type.ApiVersion();
      if (!on_event(event)) {
        end.stopped_by_handler = true;
        return false;
      }
    }
    pending.erase(0, start);
    if (pending.size() > options_.max_watch_event_bytes) {
      failure = ApiError{200, "TooLarge", "a watch event of " + type.plural + " is larger than " +
                                              std::to_string(options_.max_watch_event_bytes) +
                                              " bytes"};
      return false;
    }
    return true;
  };
  ApiResult<HttpResponse> resp = transport_->Stream(req, on_chunk, stop);
  if (!resp.ok()) return resp.error();
  if (resp->status != 200) return ErrorFromResponse(resp->status, resp->body);
  if (failure) return *failure;
  return end;
}

}  // namespace graintune::kube
