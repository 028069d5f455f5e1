#include "bench/scale/scale_cluster.h"

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

}  // namespace graintune::bench
