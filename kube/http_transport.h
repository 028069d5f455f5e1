// The HTTP(S) exchange under the Kubernetes client, behind a small interface of ours so that
// cpprestsdk (in maintenance mode) stays in one file (cpprest_transport.cc) and could be swapped.
//
// Contract: every call ends: by the request's timeout (counted from the last byte received, so a
// long watch stays open while the server talks), by the stop token, or by the response growing
// past max_response_bytes. Transport failures come back as ApiError with code 0.
//
// Resending: Send() sends a request the server cannot have received whole (its write failed, as
// on a kept-alive connection a restarted API server closed) once more on a new connection,
// whatever its method; a write that timed out is not resent, and Stream() never resends.
// Beneath that, cpprestsdk itself resends any method when a reused connection closes before the
// status line arrives; the server may have acted on that one, so a Create can come back
// AlreadyExists after an API server restart.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "kube/api_error.h"
#include "kube/config.h"

namespace graintune::kube {

struct HttpRequest {
  std::string method = "GET";
  std::string path_and_query;  // /api/v1/pods?limit=500
  std::string body;
  std::string content_type;    // set when body is not empty
  std::string accept = "application/json";
  std::chrono::milliseconds timeout{30000};
  size_t max_response_bytes = 64u << 20;
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // The whole response.
  virtual ApiResult<HttpResponse> Send(const HttpRequest& request, std::stop_token stop) = 0;
  // For watches: a 200 response's body is handed to on_chunk as it arrives until the server ends
  // it or on_chunk returns false; the result then has an empty body. A non-200 response's body is
  // read whole (bounded) into the result instead.
  virtual ApiResult<HttpResponse> Stream(const HttpRequest& request,
                                         const std::function<bool(std::string_view)>& on_chunk,
                                         std::stop_token stop) = 0;
};

// The cpprestsdk-backed transport for a configuration (TLS roots, client certificate, token).
ApiResult<std::shared_ptr<HttpTransport>> NewCpprestTransport(const ClientConfig& config);

}  // namespace graintune::kube
