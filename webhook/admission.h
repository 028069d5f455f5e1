// Admitter: AdmissionReview v1 bytes in, AdmissionReview v1 bytes out.
//
// The middle layer of the webhook (HTTP server -> Admit -> planner). It never throws and never
// blocks on I/O: every failure fails open. What each bad input gets:
//   body over max_body_bytes            400 "request body too large" (no uid can be read)
//   not JSON / not an object            400 "malformed AdmissionReview: ..."
//   nested deeper than 512 levels       400 "malformed AdmissionReview: nested deeper than ..."
//   over the work budget (work_budget.h) 200 allowed, unchanged, with a warning (outcome
//                                       over_budget): more JSON values than max_json_values
//                                       (400 if no request.uid precedes them), more sites
//                                       than max_sites, or longer than max_time
//   no request.uid                      400 "AdmissionReview has no request.uid"
//   wrong apiVersion/kind (uid present) 200 allowed, unchanged, with a warning
//   request.namespace not a string      200 allowed, unchanged, with a warning
//   operation / request.kind not strings 200 allowed, unchanged (not a CREATE of Pod/Job/JobSet)
//   operation other than CREATE         200 allowed, unchanged
//   kube-system / excluded namespace    200 allowed, unchanged
//   kind other than Pod/Job/JobSet      200 allowed, unchanged
//   object missing or not an object     200 allowed, unchanged, with a warning
//   internal error while planning       200 allowed, unchanged, with a warning
// A body with none of graintune's markers (no grain_worker_count, graintune.dev, MaxText) is
// answered from its header alone (review_header.h): 200 allowed as soon as apiVersion, kind,
// request.uid and request.kind are read, without reading (or validating) the rest.
// dryRun requests get the same answer (graintune's admission path has no side effects).
// Thread-safe if the sources are.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "webhook/worker_count_planner.h"

namespace graintune::webhook {

struct AdmitterOptions {
  size_t max_body_bytes = 3 * 1024 * 1024;  // the API server's own request limit
  std::set<std::string> excluded_namespaces = {"kube-system"};
  // Add the exporter sidecar to tuned Jobs and Pods (the binary does by default).
  std::optional<ExporterInjection> exporter;
  WorkLimits limits;
};

struct AdmissionResult {
  int http_status = 200;
  std::string body;
  std::string kind = "unknown";  // Pod | Job | JobSet | Other | unknown, for metrics
  // mutated | unchanged | failed_open | rejected_request | over_budget
  std::string outcome = "unchanged";
  std::string over_budget;  // values | sites | time, when outcome is over_budget
  int mutations = 0;
};

class Admitter {
 public:
  Admitter(PlannerSources sources, AdmitterOptions options = {})
      : sources_(sources), options_(std::move(options)) {}

  AdmissionResult Admit(std::string_view body) const;

 private:
  PlannerSources sources_;
  AdmitterOptions options_;
};

}  // namespace graintune::webhook
