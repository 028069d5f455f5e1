// Errors from the API server or from the way to it, kept typed so callers can act on them
// (retry a 409 Conflict, relist after 410 Gone, report a 403 Forbidden as it is) while keeping
// the API server's own Status message for people.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "base/status.h"

namespace graintune::kube {

struct ApiError {
  int code = 0;         // HTTP status; 0 when the request never got an answer
  std::string reason;   // metav1.Status reason (NotFound, Conflict, Forbidden, Expired, ...), or
                        //   Transport / Timeout / TooLarge / Cancelled / BadResponse
  std::string message;  // the API server's message, or what went wrong on the way

  bool IsNotFound() const { return code == 404; }
  bool IsConflict() const { return code == 409; }
  bool IsAlreadyExists() const { return code == 409 && reason == "AlreadyExists"; }
  bool IsForbidden() const { return code == 403; }
  bool IsGone() const { return code == 410 || reason == "Expired" || reason == "Gone"; }
  bool IsCancelled() const { return reason == "Cancelled"; }
  // Worth trying again later: no answer, throttled, or the server is unwell.
  bool IsRetryable() const {
    return code == 0 ? !IsCancelled() : (code == 429 || code >= 500);
  }
  std::string ToString() const {
    return (code ? std::to_string(code) + " " : std::string()) + reason + ": " + message;
  }
  Status ToStatus() const { return Status::Error(ToString()); }
};

// A T or an ApiError.
template <typename T>
using ApiResult = Result<T, ApiError>;

}  // namespace graintune::kube
