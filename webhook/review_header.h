// ReviewHeader: the few fields of an AdmissionReview needed to answer "allowed" without reading
// the object: apiVersion, kind, request.uid and request.kind.
//
// The API server writes an AdmissionReview in its Go struct order: kind, apiVersion, then the
// request with uid and kind first and the (large) object near the end. ReadReviewHeader lexes
// only as far as those fields (nlohmann_json's SAX parser, stopped once they are all seen), so a
// request graintune has nothing to do with costs a few hundred bytes of lexing instead of a DOM
// of the whole object. It validates only what it reads: the caller uses it for requests that
// cannot concern graintune, where any answer but "allowed" would be wrong anyway.
//
// Returns nullopt when a field is missing, not a string, or the JSON breaks before all of them
// were seen; the caller then takes the full path, which gives every bad input its defined answer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace graintune::webhook {

struct ReviewHeader {
  std::string api_version;  // "admission.k8s.io/v1"
  std::string kind;         // "AdmissionReview"
  std::string uid;          // request.uid, non-empty
  std::string request_group;  // request.kind.group ("" for core)
  std::string request_kind;   // request.kind.kind ("Pod")
};

std::optional<ReviewHeader> ReadReviewHeader(std::string_view body);

}  // namespace graintune::webhook
