#include "tests/node/node_workloads.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/small_file.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/wait_for.h"

namespace graintune::testing {

namespace fs = std::filesystem;
using kube::Json;

std::vector<Json> PodsWith(kube::Client& client, const std::string& ns, const std::string& selector) {
  kube::ListOptions lo;
  lo.label_selector = selector;
  auto r = client.List(kube::resources::kPods, ns, lo);
  return r.ok() ? r->items : std::vector<Json>{};
}

std::vector<Json> AttemptPods(kube::Client& client, const std::string& ns, const std::string& jobset,
                              int attempt) {
  return PodsWith(client, ns,
                  "jobset.sigs.k8s.io/jobset-name=" + jobset +
                      ",jobset.sigs.k8s.io/restart-attempt=" + std::to_string(attempt));
}

Json WaitForAttemptPod(kube::Client& client, const std::string& ns, const std::string& jobset,
                       int attempt, const std::function<bool(const Json&)>& ready,
                       std::chrono::seconds timeout) {
  Json pod;
  const bool seen = WaitFor(
      [&] {
        std::vector<Json> pods = AttemptPods(client, ns, jobset, attempt);
        if (pods.size() != 1) return false;
        pod = std::move(pods[0]);
        return ready(pod);
      },
      timeout);
  return seen ? pod : Json();
}

bool PodReady(const Json& pod) {
  for (const Json& c : pod.value("status", Json::object()).value("conditions", Json::array()))
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

int WorkersOf(const Json& pod) {
  const std::string v = pod.value("/metadata/annotations/graintune.dev~1worker-count"_json_pointer, "0");
  int workers = 0;
  std::from_chars(v.data(), v.data() + v.size(), workers);
  return workers;
}

std::string EnvOf(const Json& pod, const std::string& container, const std::string& name) {
  for (const Json& c : pod["spec"].value("containers", Json::array()))
    if (c.value("name", "") == container)
      for (const Json& e : c.value("env", Json::array()))
        if (e.value("name", "") == name) return e.value("value", "");
  return "";
}

std::string DescribeStatuses(const Json& pod) {
  std::string out = pod["metadata"].value("name", "") + " phase=" +
                    pod.value("status", Json::object()).value("phase", "") + "\n";
  for (const char* list : {"initContainerStatuses", "containerStatuses"})
    for (const Json& s : pod.value("status", Json::object()).value(list, Json::array()))
      out += "  " + std::string(list) + " " + s.value("name", "") + ": ready=" +
             (s.value("ready", false) ? "true" : "false") +
             " restartCount=" + std::to_string(s.value("restartCount", 0)) +
             " state=" + s.value("state", Json::object()).dump() + "\n";
  return out;
}

Result<std::string> HttpGet(const std::string& url) {
  return RunShell("curl -s --max-time 5 '" + url + "'", "GET " + url);
}

Status CreateNamespaceWithPolicy(ControlPlane& cp, const std::string& ns, int max_workers) {
  if (Result<std::string> r = cp.Kubectl({"create", "namespace", ns}); !r.ok()) return r.status();
  return cp.Kubectl({"apply", "-f", "-"},
                    "apiVersion: graintune.dev/v1alpha1\nkind: GrainTunePolicy\n"
                    "metadata: {name: " + ns + "}\n"
                    "spec:\n"
                    "  priority: 10\n"
                    "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n"
                    "  reservedCpu: \"0\"\n  reservedMemory: \"0\"\n"
                    "  maxWorkers: " + std::to_string(max_workers) + "\n")
      .status();
}

std::string SingleHostJobSet(const std::string& ns, const std::string& name,
                             const std::string& test_image, const std::string& trainer,
                             const std::string& args, const std::string& memory_limit) {
  return "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
         "metadata: {name: " + name + ", namespace: " + ns +
         ", annotations: {graintune.dev/dataset: c4-en-raw, graintune.dev/worker-memory: 32Mi}}\n" + R"(spec:
  failurePolicy: {maxRestarts: 3}
  replicatedJobs:
    - name: slice-job
      replicas: 1
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              terminationGracePeriodSeconds: 2
              nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x2}
              tolerations: [{key: google.com/tpu, operator: Exists, effect: NoSchedule}]
              containers:
                - name: trainer
                  image: )" + test_image + R"(
                  imagePullPolicy: Never
                  command: [/usr/local/bin/)" + trainer + R"(]
                  args: )" + args + R"(
                  env:
                    - {name: M_MODEL_NAME, value: llama3-8b}
                    - {name: M_PER_DEVICE_BATCH_SIZE, value: "2"}
                    - {name: M_MAX_TARGET_LENGTH, value: "8192"}
                    - {name: M_GRAIN_WORKER_COUNT, value: "-1"}
                  resources: {limits: {google.com/tpu: 4, memory: )" + memory_limit + R"(}}
)";
}

std::vector<int> PodProcesses(const std::string& pod_uid, const std::string& program) {
  std::vector<int> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline_in(e.path() / "cmdline", std::ios::binary);
    std::string argv0;
    std::getline(cmdline_in, argv0, '\0');
    if (argv0 != program) continue;
    std::stringstream cgroup;
    cgroup << std::ifstream(e.path() / "cgroup").rdbuf();
    if (cgroup.str().find("pod" + pod_uid) != std::string::npos) out.push_back(std::stoi(pid));
  }
  return out;
}

PodTrainer FindPodTrainer(const std::string& pod_uid, const std::string& shell,
                          const std::string& trainer_pattern) {
  PodTrainer found;
  for (int pid : PodProcesses(pod_uid, shell)) {
    const int trainer = TrainerIn(Descendants(pid), trainer_pattern);
    if (trainer != 0 && (found.shell == 0 || pid < found.shell)) found = {pid, trainer};
  }
  return found;
}

Status ResolveInPods(const RealNode& node, const std::vector<Json>& pods, const std::string& name) {
  std::string address;
  for (const Json& pod : pods)
    if (pod.value("/metadata/annotations/batch.kubernetes.io~1job-completion-index"_json_pointer, std::string()) == "0")
      address = pod.value("/status/podIP"_json_pointer, std::string());
  if (address.empty()) return Status::Error("the pod of completion index 0 has no address yet");
  for (const Json& pod : pods) {
    // Bind-mounted as the container's /etc/hosts: an append is seen at once. The kubelet writes
    // it anew for each container it starts (its last line without a newline), so the caller
    // calls this again. Never empty once written (it names localhost).
    const std::string hosts = node.PodHostsFile(pod.value("/metadata/uid"_json_pointer, std::string()));
    const std::string held = ReadSmallFile(hosts);
    if (held.empty()) return Status::Error("no " + hosts + " yet");
    if (held.find(" " + name + "\n") != std::string::npos) continue;
    std::ofstream out(hosts, std::ios::app);
    out << (held.back() == '\n' ? "" : "\n") << address << " " << name << "\n";
    if (!out.flush()) return Status::Error("cannot append to " + hosts);
  }
  return Status::Ok();
}

}  // namespace graintune::testing
