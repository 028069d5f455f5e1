#include "bench/scale/api_audit.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/rfc3339.h"

namespace graintune::bench {

std::string AuditPolicyFor(const std::vector<std::string>& users) {
  std::string text =
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
      "- level: Metadata\n  users:\n";
  for (const std::string& u : users) text += "  - \"" + u + "\"\n";
  return text + "- level: None\n";
}

std::vector<std::string> AuditFlags(const std::string& policy_path, const std::string& log_path) {
  return {"--audit-policy-file", policy_path, "--audit-log-path", log_path,
          "--audit-log-format", "json", "--audit-log-maxsize", "0"};
}

Result<RequestCounts> CountRequests(const std::string& log_path, const std::string& user,
                                    std::chrono::system_clock::time_point from,
                                    std::chrono::system_clock::time_point to) {
  std::ifstream in(log_path);
  if (!in) return Status::Error("cannot read the audit log " + log_path);
  const std::time_t lo = std::chrono::system_clock::to_time_t(from);
  const std::time_t hi = std::chrono::system_clock::to_time_t(to);
  RequestCounts counts;
  std::set<std::string> seen;  // a watch logs ResponseStarted and ResponseComplete
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || !e.contains("user") || !e["user"].is_object()) continue;
    if (e["user"].value("username", "") != user) continue;
    const std::optional<std::time_t> at = ParseRfc3339(e.value("requestReceivedTimestamp", ""));
    if (!at || *at < lo || *at >= hi) continue;
    if (!seen.insert(e.value("auditID", "")).second) continue;
    ++counts.by_verb[e.value("verb", "?")];
    const nlohmann::json object = e.value("objectRef", nlohmann::json::object());
    ++counts.by_resource[object.is_object() ? object.value("resource", "?") : "?"];
    ++counts.total;
  }
  return counts;
}

}  // namespace graintune::bench
