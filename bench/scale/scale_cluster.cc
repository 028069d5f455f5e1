#include "bench/scale/scale_cluster.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "tests/controlplane/tpu_nodes.h"
#include "workload/yaml_json.h"

namespace graintune::bench {
namespace {

using kube::Json;

// A v5p slice topology of `chips` chips (a power of two): three dimensions, doubled in turn.
std::string V5pTopology(int chips) {
  int d[3] = {1, 1, 1};
  for (int i = 0; d[0] * d[1] * d[2] < chips; i = (i + 1) % 3) d[2 - i] *= 2;
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

Status KubectlCreate(testing::ControlPlane& cp, const std::vector<Json>& items) {
  const Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  Result<std::string> out = cp.Kubectl({"create", "-f", "-", "-o", "name"}, list.dump());
  return out.ok() ? Status::Ok() : Status::Error("kubectl create: " + out.error().substr(0, 2000));
}

}  // namespace

std::string JobSetName(int i) { return "slice-" + std::to_string(i); }
std::string SingleJobName(int i) { return "single-" + std::to_string(i); }

std::vector<std::pair<std::string, int>> WorkloadsOf(const ScaleShape& shape) {
  std::vector<std::pair<std::string, int>> w;
  for (int i = 0; i < shape.jobsets; ++i) w.emplace_back(JobSetName(i), shape.hosts_per_jobset);
  for (int i = 0; i < shape.singles; ++i) w.emplace_back(SingleJobName(i), 1);
  return w;
}

Status CreateNodes(testing::ControlPlane& cp, const ScaleShape& shape) {
  std::vector<Json> nodes;
  const std::string topology = V5pTopology(4 * shape.hosts_per_jobset);
  for (int i = 0; i < shape.hosts(); ++i) {
    Result<Json> n = testing::TpuNode({.name = "gke-tpu-v5p-" + std::to_string(i),
                                       .machine_type = "ct5p-hightpu-4t",
                                       .accelerator = "tpu-v5p-slice", .topology = topology});
    if (!n.ok()) return n.status();
    nodes.push_back(*n);
  }
  for (int i = 0; i < shape.singles; ++i) {
    Result<Json> n = testing::TpuNode({.name = "gke-tpu-v5e-" + std::to_string(i),
                                       .machine_type = "ct5lp-hightpu-4t",
                                       .accelerator = "tpu-v5-lite-podslice", .topology = "2x2"});
    if (!n.ok()) return n.status();
    nodes.push_back(*n);
  }
  return KubectlCreate(cp, nodes);
}

Status CreateWorkloads(testing::ControlPlane& cp, const ScaleShape& shape,
                       const std::string& jobset_example) {
  Result<std::vector<Json>> docs = workload::ParseYamlDocuments(jobset_example);
  if (!docs.ok() || docs->size() != 1) return Status::Error("the JobSet example does not read as one object");
  if (Result<std::string> made = cp.Kubectl({"create", "namespace", kNamespace}); !made.ok())
    return Status::Error("creating namespace " + std::string(kNamespace) + ": " + made.error());
  Json base = docs->front();
  base["metadata"]["namespace"] = kNamespace;
  // JobSet's exclusive placement wants node-pool labels KWOK Nodes lack; KWOK cannot serve
  // host-network pods apart (they would share the node's one address).
  base["metadata"]["annotations"].erase("alpha.jobset.sigs.k8s.io/exclusive-topology");
  base["spec"]["failurePolicy"]["maxRestarts"] = 100;
  Json& job = base["spec"]["replicatedJobs"][0]["template"]["spec"];
  job["parallelism"] = job["completions"] = shape.hosts_per_jobset;
  Json& pod = job["template"]["spec"];
  pod["hostNetwork"] = false;
  pod.erase("dnsPolicy");
  pod["nodeSelector"] = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5p-slice"},
                         {"cloud.google.com/gke-tpu-topology", V5pTopology(4 * shape.hosts_per_jobset)}};
  std::vector<Json> items;
  for (int i = 0; i < shape.jobsets; ++i) {
    Json js = base;
    js["metadata"]["name"] = JobSetName(i);
    js["metadata"]["labels"]["xpk.google.com/workload"] = JobSetName(i);
    items.push_back(std::move(js));
  }
  for (int i = 0; i < shape.singles; ++i) {
    Json template_spec = pod;
    template_spec["nodeSelector"] = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                                     {"cloud.google.com/gke-tpu-topology", "2x2"}};
    Json& c = template_spec["containers"][0];
    c["command"] = {"python3", "-m", "MaxText.train", "MaxText/configs/base.yml"};
    c["args"] = {"run_name=" + SingleJobName(i), "model_name=llama3-8b", "per_device_batch_size=1",
                 "max_target_length=4096", "dataset_type=grain"};
    c["env"] = {{{"name", "M_GRAIN_WORKER_COUNT"}, {"value", "-1"}}};
    items.push_back({{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"metadata", {{"name", SingleJobName(i)}, {"namespace", kNamespace},
                                   {"annotations", {{"graintune.dev/dataset", "c4-en-raw"}}}}},
                     {"spec", {{"backoffLimit", 100},
                               {"template", {{"spec", template_spec}}}}}});
  }
  return KubectlCreate(cp, items);
}

int PodIndexInWorkload(const Json& pod) {
  const Json meta = pod.value("metadata", Json::object());
  const Json labels = meta.value("labels", Json::object());
  const std::string index = labels.value("batch.kubernetes.io/job-completion-index", "");
  if (!index.empty() && labels.contains("jobset.sigs.k8s.io/jobset-name")) return std::atoi(index.c_str());
  const std::string job = labels.value("batch.kubernetes.io/job-name", labels.value("job-name", ""));
  const std::string prefix = SingleJobName(0).substr(0, SingleJobName(0).size() - 1);
  if (job.rfind(prefix, 0) == 0) return std::atoi(job.c_str() + prefix.size());
  return -1;
}

Status FailOnePodOfEach(testing::ControlPlane& cp, const std::vector<Json>& pods) {
  std::vector<std::string> names;
  for (const Json& p : pods) names.push_back(p["metadata"].value("name", ""));
  if (names.empty()) return Status::Ok();
  std::vector<std::string> args = {"annotate", "-n", kNamespace, "--overwrite", "pod"};
  args.insert(args.end(), names.begin(), names.end());
  args.push_back("graintune.dev/test-terminate=Error");
  Result<std::string> out = cp.Kubectl(args);
  return out.ok() ? Status::Ok() : Status::Error("kubectl annotate: " + out.error().substr(0, 2000));
}

namespace {

// "  value: count" lines, largest count first, at most `limit` of them.
std::string Counted(const std::map<std::string, int>& counts, size_t limit) {
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [what, n] : counts) sorted.emplace_back(n, what);
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i)
    out += "\n    " + std::to_string(sorted[i].first) + "  " + sorted[i].second;
  return out;
}

Result<Json> KubectlJson(testing::ControlPlane& cp, const std::vector<std::string>& args) {
  Result<std::string> out = cp.Kubectl(args);
  if (!out.ok()) return Status::Error(out.error().substr(0, 500));
  Json parsed = Json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Error("kubectl's output is not JSON");
  return parsed;
}

}  // namespace

std::string SchedulingPicture(testing::ControlPlane& cp) {
  std::string out = "\n  pods in namespace " + std::string(kNamespace) + ":";
  if (Result<Json> pods = KubectlJson(cp, {"get", "pods", "-n", kNamespace, "-o", "json"}); !pods.ok()) {
    out += " not listed: " + pods.error();
  } else {
    std::map<std::string, int> states, reasons;
    for (const Json& p : pods->value("items", Json::array())) {
      const Json status = p.value("status", Json::object());
      const bool bound = !p.value("spec", Json::object()).value("nodeName", "").empty();
      const bool terminating = p.value("metadata", Json::object()).contains("deletionTimestamp");
      ++states[status.value("phase", "?") + (bound ? ", bound" : ", unbound") + (terminating ? ", terminating" : "")];
      for (const Json& c : status.value("conditions", Json::array()))
        if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
          ++reasons[c.value("message", c.value("reason", "?"))];
    }
    out += Counted(states, 20);
    if (!reasons.empty()) out += "\n  the scheduler's reasons for the pods it could not place:" + Counted(reasons, 5);
  }
  out += "\n  nodes:";
  if (Result<Json> nodes = KubectlJson(cp, {"get", "nodes", "-o", "json"}); !nodes.ok()) {
    out += " not listed: " + nodes.error();
  } else {
    std::map<std::string, int> ready, taints;
    for (const Json& n : nodes->value("items", Json::array())) {
      std::string r = "Ready condition missing";
      for (const Json& c : n.value("status", Json::object()).value("conditions", Json::array()))
        if (c.value("type", "") == "Ready") r = "Ready=" + c.value("status", "?") + " " + c.value("reason", "");
      ++ready[r];
      for (const Json& t : n.value("spec", Json::object()).value("taints", Json::array()))
        ++taints["taint " + t.value("key", "?") + ":" + t.value("effect", "?")];
    }
    out += Counted(ready, 10) + Counted(taints, 10);
  }
  return out;
}

}  // namespace graintune::bench
