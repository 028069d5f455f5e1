#include "webhook/admission.h"

#include <algorithm>

#include "kube/base64.h"
#include "webhook/bounded_json.h"
#include "webhook/review_header.h"
#include "webhook/work_budget.h"
#include "workload/pod_templates.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxWarnings = 12;
// Far deeper than any Kubernetes object (the API server's own decoder stops at 10,000 levels;
// real pods nest under 20), and shallow enough that every recursive walk of nlohmann's values
// (copy, compare, dump) stays far from the stack's end.
constexpr int kMaxJsonDepth = 512;
constexpr size_t kMaxWarningBytes = 600;

AdmissionResult BadRequest(std::string message) {
  AdmissionResult r;
  r.http_status = 400;
  r.outcome = "rejected_request";
  r.body = json{{"error", std::move(message)}}.dump();
  return r;
}

// The first `bytes` of UTF-8 `text`, backed up to a character boundary (a cut inside a
// character makes invalid UTF-8, which the response's dump would refuse).
std::string CutAtCharacter(const std::string& text, size_t bytes) {
  size_t end = std::min(bytes, text.size());
  while (end > 0 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

json Response(const std::string& uid, const std::vector<std::string>& warnings) {
  json response = {{"uid", uid}, {"allowed", true}};
  if (!warnings.empty()) {
    json list = json::array();
    for (const std::string& w : warnings) {
      if (list.size() >= kMaxWarnings) break;
      list.push_back(w.size() > kMaxWarningBytes ? CutAtCharacter(w, kMaxWarningBytes) + "..." : w);
    }
    response["warnings"] = list;
  }
  return response;
}

std::string Review(json response) {
  // Invalid UTF-8 cannot reach here from the request (the parser validates it); replacing any
  // instead of throwing keeps the answer defined whatever a warning quotes.
  return json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
              {"response", std::move(response)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// Cheap test before any JSON work: objects with none of graintune's markers cost a scan. A
// MaxText trainer counts as a marker: its -1 may sit in a mounted ConfigMap YAML, invisible in
// the object (the chart's matchConditions use the same markers).
bool MayConcernGraintune(std::string_view body) {
  for (std::string_view marker : {"grain_worker_count", "GRAIN_WORKER_COUNT", "graintune.dev",
                                  "MaxText", "maxtext"}) {
    if (body.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

// An answer that allows the object unchanged; `outcome` "" for a plain pass.
AdmissionResult Allowed(const std::string& uid, std::string_view kind, std::string outcome,
                        const std::vector<std::string>& warnings) {
  AdmissionResult result;
  result.kind = std::string(kind);
  if (!outcome.empty()) result.outcome = std::move(outcome);
  result.body = Review(Response(uid, warnings));
  return result;
}

// A body over the value budget: allowed unchanged if its header names the request.
AdmissionResult OverValueBudget(std::string_view body, size_t max_values) {
  std::optional<ReviewHeader> h = ReadReviewHeader(body);
  if (!h)
    return BadRequest("malformed AdmissionReview: over " + std::to_string(max_values) +
                      " JSON values and no request.uid before them");
  AdmissionResult result = Allowed(
      h->uid, ToString(workload::KindOf(h->request_group, h->request_kind)), "over_budget",
      {"graintune: this request holds more than " + std::to_string(max_values) +
       " JSON values, over the webhook's per-request budget; allowed unchanged"});
  result.over_budget = "values";
  return result;
}

// Plans `object` within `budget` and answers with its patch (or why it is unchanged).
AdmissionResult PlanAndAnswer(json&& object, workload::WorkloadKind kind, const std::string& ns,
                              const std::string& uid, PlannerSources sources,
                              const AdmitterOptions& options, WorkBudget& budget) {
  AdmissionResult result;
  result.kind = ToString(kind);
  try {
    // The object is moved into the planner, which rewrites it in place: nothing is copied but
    // the subtrees the patch covers.
    Plan plan = PlanWorkerCount(std::move(object), kind, ns, sources,
                                options.exporter ? &*options.exporter : nullptr, &budget);
    json response = Response(uid, plan.warnings);
    if (!budget.exceeded().empty()) {
      result.outcome = "over_budget";
      result.over_budget = budget.exceeded();
    } else if (plan.changed) {
      response["patchType"] = "JSONPatch";
      response["patch"] = kube::Base64Encode(plan.patch.dump());
      result.outcome = "mutated";
      result.mutations = static_cast<int>(plan.findings.size());
    }
    result.body = Review(std::move(response));
  } catch (const std::exception& e) {
    return Allowed(uid, result.kind, "failed_open",
                   {std::string("graintune: internal error (") + e.what() + "); allowed unchanged"});
  }
  return result;
}

}  // namespace

AdmissionResult Admitter::Admit(std::string_view body) const {
  if (body.size() > options_.max_body_bytes)
    return BadRequest("request body too large: " + std::to_string(body.size()) + " bytes, limit " +
                      std::to_string(options_.max_body_bytes));
  // Nothing of graintune's in the body: read only the header and allow (the common case costs
  // a few hundred bytes of lexing). Anything odd in the header takes the full path below.
  const bool may_concern = MayConcernGraintune(body);
  if (!may_concern) {
    if (std::optional<ReviewHeader> h = ReadReviewHeader(body);
        h && h->api_version == "admission.k8s.io/v1" && h->kind == "AdmissionReview")
      return Allowed(h->uid, ToString(workload::KindOf(h->request_group, h->request_kind)), "", {});
  }
  const auto start = WorkBudget::Clock::now();
  BoundedJson parsed = ParseBoundedJson(body, kMaxJsonDepth, options_.limits.max_json_values);
  if (parsed.verdict == BoundedJson::Verdict::kTooDeep)
    return BadRequest("malformed AdmissionReview: nested deeper than " +
                      std::to_string(kMaxJsonDepth) + " levels");
  // Valid or not, it is too big to look at.
  if (parsed.verdict == BoundedJson::Verdict::kTooManyValues)
    return OverValueBudget(body, options_.limits.max_json_values);
  json& review = parsed.value;
  if (review.is_discarded() || !review.is_object())
    return BadRequest("malformed AdmissionReview: body is not a JSON object");
  json* request = review.contains("request") && review["request"].is_object()
                      ? &review["request"] : nullptr;
  if (!request || !request->contains("uid") || !(*request)["uid"].is_string() ||
      (*request)["uid"].get<std::string>().empty())
    return BadRequest("AdmissionReview has no request.uid");
  const std::string uid = (*request)["uid"].get<std::string>();

  const std::string api_version = workload::StringField(review, "apiVersion");
  const std::string review_kind = workload::StringField(review, "kind");
  if (api_version != "admission.k8s.io/v1" || review_kind != "AdmissionReview")
    return Allowed(uid, AdmissionResult().kind, "failed_open",
                   {"graintune: expected admission.k8s.io/v1 AdmissionReview, got " +
                    (api_version.empty() ? "?" : api_version) + " " +
                    (review_kind.empty() ? "?" : review_kind) + "; allowed unchanged"});
  const json* kind = request->contains("kind") ? &(*request)["kind"] : nullptr;
  const workload::WorkloadKind workload =
      kind ? workload::KindOf(workload::StringField(*kind, "group"), workload::StringField(*kind, "kind"))
           : workload::WorkloadKind::kOther;
  if (request->contains("namespace") && !(*request)["namespace"].is_string())
    return Allowed(uid, ToString(workload), "failed_open",
                   {"graintune: request.namespace is not a string; allowed unchanged"});
  const std::string ns = workload::StringField(*request, "namespace");
  if (workload::StringField(*request, "operation") != "CREATE" || workload == workload::WorkloadKind::kOther ||
      options_.excluded_namespaces.count(ns) || !may_concern)
    return Allowed(uid, ToString(workload), "", {});
  if (!request->contains("object") || !(*request)["object"].is_object())
    return Allowed(uid, ToString(workload), "failed_open",
                   {"graintune: request has no object; allowed unchanged"});
  WorkBudget budget(options_.limits, start);
  return PlanAndAnswer(std::move((*request)["object"]), workload, ns, uid, sources_, options_, budget);
}

}  // namespace graintune::webhook
