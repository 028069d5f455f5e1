#include "tests/integration/graintune_metrics.h"

#include <cstring>
#include <regex>
#include <sstream>

#include "kube/http_transport.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::testing {

namespace {

using kube::Json;

constexpr const char* kHistogramSuffixes[] = {"_bucket", "_count", "_sum"};

Result<std::string> Fetch(kube::HttpTransport& http, const std::string& method, const std::string& path,
                          const std::string& body = "") {
  kube::HttpRequest r{.method = method, .path_and_query = path, .body = body,
                      .content_type = body.empty() ? "" : "application/json", .accept = "*/*"};
  kube::ApiResult<kube::HttpResponse> response = http.Send(r, {});
  if (!response.ok()) return response.error().ToStatus();
  if (response->status != 200 && method == "GET")
    return Status::Error(path + " answered " + std::to_string(response->status));
  return response->body;
}

}  // namespace

void Exposition::Add(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  static const std::regex type_line(R"(^# TYPE (\S+) (\S+)$)");
  static const std::regex sample_line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? \S+.*$)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, type_line)) types[m[1]] = m[2];
    else if (std::regex_match(line, m, sample_line)) samples[m[1]].push_back(m[3]);
  }
}

std::string Exposition::FamilyOf(const std::string& name) const {
  for (const char* suffix : kHistogramSuffixes) {
    if (!name.ends_with(suffix)) continue;
    const std::string family = name.substr(0, name.size() - std::strlen(suffix));
    if (auto it = types.find(family); it != types.end() && (it->second == "histogram" || it->second == "summary"))
      return family;
  }
  return name;
}

bool Exposition::HasLabel(const std::string& name, const std::string& label) const {
  const std::regex pattern("(^|,)" + label + "=\"");
  for (const auto& [sample_name, label_sets] : samples) {
    if (sample_name != name && FamilyOf(sample_name) != name) continue;
    for (const std::string& labels : label_sets)
      if (std::regex_search(labels, pattern)) return true;
  }
  return false;
}

Result<Exposition> ScrapeGraintuneBinaries(ControlPlane& cp, const GraintuneBinaries& binaries) {
  Exposition exported;
  // The webhook answers one request of each outcome first: a body it cannot read, a review of
  // the wrong version, one it has nothing to do with, one it mutates.
  auto webhook = WebhookUnderTest::Start(cp, {.binary = binaries.webhook, .register_configuration = false});
  if (!webhook.ok()) return Status::Error("graintune-webhook: " + webhook.error());
  auto https = kube::NewCpprestTransport(
      {.server = "https://127.0.0.1:" + std::to_string((*webhook)->port()), .ca_pem = (*webhook)->ca_pem()});
  if (!https.ok()) return https.error().ToStatus();
  const Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", "a"}}},
                    {"spec", {{"nodeSelector", {{"node.kubernetes.io/instance-type", "ct6e-standard-4t"}}},
                              {"containers", {{{"name", "maxtext"}, {"args", {"grain_worker_count=-1"}},
                                               {"resources", {{"limits", {{"google.com/tpu", 4}}}}}}}}}}};
  auto review = [&](const std::string& version, const Json& object) {
    return Json{{"apiVersion", version}, {"kind", "AdmissionReview"},
                {"request", {{"uid", "u"}, {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                             {"namespace", "a"}, {"operation", "CREATE"}, {"object", object}}}}.dump();
  };
  for (const std::string& body : {std::string("{"), review("admission.k8s.io/v1beta1", pod),
                                  review("admission.k8s.io/v1", {{"kind", "Pod"}}),
                                  review("admission.k8s.io/v1", pod)}) {
    Result<std::string> answer = Fetch(**https, "POST", "/mutate", body);
    if (!answer.ok()) return Status::Error("graintune-webhook /mutate: " + answer.error());
  }
  Result<std::string> webhook_metrics = Fetch(**https, "GET", "/metrics");
  if (!webhook_metrics.ok()) return Status::Error("graintune-webhook /metrics: " + webhook_metrics.error());
  exported.Add(*webhook_metrics);

  Result<int> port = FreeLoopbackPort();
  if (!port.ok()) return port.status();
  auto op = ChildProcess::Spawn({binaries.operator_, "--kubeconfig", cp.kubeconfig_path(),
                                 "--identity", "metrics", "--lease-duration-ms", "4000",
                                 "--renew-deadline-ms", "3000", "--retry-period-ms", "500",
                                 "--bind-address", "127.0.0.1", "--port", std::to_string(*port)},
                                cp.dir() + "/operator-metrics.log");
  if (!op.ok()) return Status::Error("graintune-operator: " + op.error());
  auto http = kube::NewCpprestTransport(
      {.server = "http://127.0.0.1:" + std::to_string(*port), .allow_plain_http = true});
  if (!http.ok()) return http.error().ToStatus();
  Result<std::string> operator_metrics = Status::Error("not fetched");
  if (!WaitFor([&] {
        operator_metrics = Fetch(**http, "GET", "/metrics");
        return operator_metrics.ok() && operator_metrics->find(binaries.operator_ready) != std::string::npos;
      }, std::chrono::seconds(30)))
    return Status::Error("graintune-operator /metrics never showed '" + binaries.operator_ready + "': " +
                         (operator_metrics.ok() ? *operator_metrics : operator_metrics.error()));
  exported.Add(*operator_metrics);
  return exported;
}

}  // namespace graintune::testing
