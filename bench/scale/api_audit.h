// What one client costs the API server, counted from the API server's own audit log: an audit
// policy that records request metadata of the given users only (service accounts, e.g.
// system:serviceaccount:graintune-system:graintune-operator) and nothing else, and a counter of
// the requests those users made in a time window, by verb (get, list, watch, create, update,
// patch, delete) and by resource. The apiserver_request_total metric has no user label, hence the audit log.
//
// Errors as values: an unreadable log is an error; lines that do not parse are skipped.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::bench {

// The audit Policy document (YAML) for kube-apiserver --audit-policy-file.
std::string AuditPolicyFor(const std::vector<std::string>& users);

// The kube-apiserver flags that write that policy's events as JSON lines to `log_path`.
std::vector<std::string> AuditFlags(const std::string& policy_path, const std::string& log_path);

struct RequestCounts {
  std::map<std::string, long> by_verb;
  std::map<std::string, long> by_resource;  // objectRef.resource: pods, leases, graintunings...
  long total = 0;
};

// Requests by `user` received in [from, to) (each request once, whatever its stages).
Result<RequestCounts> CountRequests(const std::string& log_path, const std::string& user,
                                    std::chrono::system_clock::time_point from,
                                    std::chrono::system_clock::time_point to);

}  // namespace graintune::bench
