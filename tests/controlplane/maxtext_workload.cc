#include "tests/controlplane/maxtext_workload.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "telemetry/maxtext_metrics.h"
#include "tests/controlplane/tpu_nodes.h"

namespace graintune::testing {

std::optional<MaxTextEnv> MaxTextFromEnvironment() {
  const char* python = std::getenv("GRAINTUNE_MAXTEXT_PYTHON");
  const char* records = std::getenv("GRAINTUNE_MAXTEXT_LARGE_RECORDS");
  const char* tokenizer = std::getenv("GRAINTUNE_MAXTEXT_TOKENIZER");
  const char* args = std::getenv("GRAINTUNE_MAXTEXT_TINY_ARGS");
  if (!python || !records || !tokenizer || !args) return std::nullopt;
  return MaxTextEnv{python, records, tokenizer, args};
}

Result<kube::Json> MaxTextHost(const std::string& name, double cpus, double memory_bytes) {
  Result<kube::Json> node = TpuNode(
      {.name = name, .topology = "2x2", .allocatable_cpu = cpus, .allocatable_memory_bytes = memory_bytes});
  if (!node.ok()) return node;
  (*node)["metadata"]["labels"][kMaxTextHostLabel] = kMaxTextHostValue;
  return node;
}

std::string CoordinatorName(const TinyJobSetOptions& o) { return o.name + "-slice-job-0-0." + o.name; }

std::string TinyMaxTextJobSet(const MaxTextEnv& env, const TinyJobSetOptions& o) {
  const std::string train = "python3 -m maxtext.trainers.pre_train.train " + env.tiny_args +
                            " grain_train_files=" + env.records + " tokenizer_path=" + env.tokenizer +
                            " run_name=" + o.name + " base_output_directory=" + o.out_dir +
                            " steps=" + std::to_string(o.steps) + " grain_worker_count=-1" +
                            (o.extra_args.empty() ? "" : " " + o.extra_args) +
                            (o.jax_distributed ? " skip_jax_distributed_system=false" : "");
  const std::string selector = o.node_selector.empty()
                                   ? "{" + std::string(kMaxTextHostLabel) + ": " + kMaxTextHostValue + "}"
                                   : o.node_selector;
  std::string volumes, mounts, env_path, security, memory;
  for (size_t i = 0; i < o.host_paths.size() + o.writable_host_paths.size(); ++i) {
    const bool writable = i >= o.host_paths.size();
    const std::string& path = writable ? o.writable_host_paths[i - o.host_paths.size()] : o.host_paths[i];
    const std::string name = "host-" + std::to_string(i);
    volumes += "                - {name: " + name + ", hostPath: {path: \"" + path + "\", type: Directory}}\n";
    mounts += "                    - {name: " + name + ", mountPath: \"" + path + "\", readOnly: " +
              (writable ? "false" : "true") + (writable && o.writable_per_pod ? ", subPathExpr: $(POD_NAME)" : "") +
              "}\n";
  }
  if (!volumes.empty()) {
    volumes = "              volumes:\n" + volumes;
    mounts = "                  volumeMounts:\n" + mounts;
  }
  if (!o.path.empty()) env_path = "                    - {name: PATH, value: \"" + o.path + "\"}\n";
  if (o.writable_per_pod)
    env_path += "                    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n";
  if (o.jax_distributed) {
    const std::string pods = "\"" + std::to_string(o.pods) + "\"";
    env_path +=
        "                    - {name: JOB_INDEX, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['jobset.sigs.k8s.io/job-index']\"}}}\n"
        "                    - {name: JOB_COMPLETION_INDEX, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['batch.kubernetes.io/job-completion-index']\"}}}\n"
        "                    - {name: PROCESSES_IN_JOB, value: " + pods + "}\n"
        "                    - {name: JAX_PROCESS_COUNT, value: " + pods + "}\n"
        "                    - {name: JAX_COORDINATOR_ADDRESS, value: " + CoordinatorName(o) + "}\n";
  }
  // The trainer's container only: the sidecar graintune injects keeps its own user.
  if (o.run_as_root) security = "                  securityContext: {runAsUser: 0, runAsGroup: 0}\n";
  if (!o.memory_limit.empty()) memory = ", memory: " + o.memory_limit;
  return std::string("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n") +
         "metadata: {name: " + o.name + ", namespace: " + o.ns + "}\n" + R"(spec:
  failurePolicy: {maxRestarts: 3}
  replicatedJobs:
    - name: slice-job
      replicas: 1
      template:
        spec:
          parallelism: )" + std::to_string(o.pods) + R"(
          completions: )" + std::to_string(o.pods) + R"(
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              nodeSelector: )" + selector + R"(
              tolerations: [{key: google.com/tpu, operator: Exists}]
)" + volumes + R"(              containers:
                - name: maxtext
                  image: )" + o.image + R"(
                  imagePullPolicy: IfNotPresent
                  command:
                    - bash
                    - -c
                    - |
                      echo start: $(date);
                      _sigterm() (kill -SIGTERM $! 2>/dev/null;);
                      trap _sigterm SIGTERM;
                      ()" + train + R"() & PID=$!;
                      while kill -0 $PID 2>/dev/null; do sleep 1; done;
                      wait $PID;
                      EXIT_CODE=$?;
                      echo EXIT_CODE=$EXIT_CODE;
                      exit $EXIT_CODE
                  env:
                    - {name: JAX_PLATFORMS, value: cpu}
                    - {name: XLA_FLAGS, value: --xla_cpu_multi_thread_eigen=false}
                    - {name: HF_HUB_OFFLINE, value: "1"}
)" + env_path + mounts + security + R"(                  resources: {limits: {google.com/tpu: )" + std::to_string(o.chips) + memory + R"(}}
)";
}

Result<TinyJobSetOptions> OnRealNode(const MaxTextEnv& env, TinyJobSetOptions o, const std::string& image,
                                     const std::string& memory_limit) {
  namespace fs = std::filesystem;
  const fs::path venv = fs::path(env.python).parent_path().parent_path();
  // The venv's python is a link to the interpreter it was made from: "home = PREFIX/bin".
  std::ifstream cfg(venv / "pyvenv.cfg");
  std::string python_prefix;
  for (std::string line; std::getline(cfg, line);) {
    if (line.rfind("home", 0) != 0 || line.find('=') == std::string::npos) continue;
    std::string home = line.substr(line.find('=') + 1);
    home.erase(0, home.find_first_not_of(' '));
    python_prefix = fs::path(home).parent_path().string();
  }
  if (python_prefix.empty() || python_prefix == "/")
    return Status::Error("no usable 'home = PREFIX/bin' in " + (venv / "pyvenv.cfg").string());
  o.image = image;
  o.node_selector = "{cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x2}";
  for (const std::string& dir : {venv.string(), python_prefix, fs::path(env.records).parent_path().string(),
                                 fs::path(env.tokenizer).parent_path().string()})
    if (std::find(o.host_paths.begin(), o.host_paths.end(), dir) == o.host_paths.end()) o.host_paths.push_back(dir);
  o.path = (venv / "bin").string() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  o.run_as_root = true;
  o.memory_limit = memory_limit;
  return o;
}

std::string NamespacePolicy(const std::string& ns, int max_workers, int min_workers, bool start_check) {
  return std::string("apiVersion: graintune.dev/v1alpha1\nkind: GrainTunePolicy\n") +
         "metadata: {name: " + ns + "}\nspec:\n  priority: 10\n" +
         "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n" +
         "  reservedCpu: \"0\"\n  reservedMemory: \"0\"\n  maxWorkers: " + std::to_string(max_workers) + "\n" +
         "  minWorkers: " + std::to_string(min_workers) + "\n" + (start_check ? "" : "  startCheck: false\n");
}

std::vector<kube::Json> AttemptPods(ControlPlane& cp, const std::string& ns, const std::string& jobset,
                                    int attempt) {
  kube::ListOptions lo;
  lo.label_selector = "jobset.sigs.k8s.io/jobset-name=" + jobset +
                      ",jobset.sigs.k8s.io/restart-attempt=" + std::to_string(attempt);
  auto r = cp.AdminClient()->List(kube::resources::kPods, ns, lo);
  return r.ok() ? r->items : std::vector<kube::Json>{};
}

int WorkerCountOf(const kube::Json& pod) {
  const kube::Json annotations = pod.value("/metadata/annotations"_json_pointer, kube::Json::object());
  auto it = annotations.is_object() ? annotations.find("graintune.dev/worker-count") : annotations.end();
  if (it == annotations.end() || !it->is_string()) return -1;
  const std::string text = *it;
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && n >= 0 && n < (1 << 20) ? static_cast<int>(n) : -1;
}

std::string ScriptOf(const kube::Json& pod, const std::string& name) {
  const kube::Json containers = pod.value("/spec/containers"_json_pointer, kube::Json::array());
  for (const kube::Json& c : containers) {
    if (!c.is_object() || c.value("name", "") != name) continue;
    const kube::Json command = c.value("command", kube::Json::array());
    if (command.is_array() && !command.empty() && command.back().is_string()) return command.back();
  }
  return "";
}

OwnTrainer MaxTextTrainer(const MaxTextEnv& env) {
  const std::string venv_bin = std::filesystem::path(env.python).parent_path();
  const char* path = std::getenv("PATH");
  return OwnTrainer{.env = {"PATH=" + venv_bin + ":" + (path ? path : "/usr/bin:/bin")},
                    .trainer_pattern = kMaxTextTrainerPattern};
}

bool RunsWithWorkers(const std::string& command, int workers) {
  const std::string word = " grain_worker_count=" + std::to_string(workers);
  for (size_t at = command.find(word); at != std::string::npos; at = command.find(word, at + 1)) {
    const size_t end = at + word.size();
    if (end == command.size() || std::string(" )'\"\n;").find(command[end]) != std::string::npos) return true;
  }
  return false;
}

MetricsFileRead ReadMaxTextMetricsFile(const std::string& path) {
  MetricsFileRead read;
  std::ifstream file(path);
  std::vector<telemetry::StepSample> steps;
  for (std::string line; std::getline(file, line);) {
    ++read.lines;
    Result<telemetry::MetricsLine> parsed = telemetry::ParseMetricsLine(line);
    if (!parsed.ok()) {
      read.malformed.push_back(parsed.error() + ": " + line);
    } else if (parsed->sample) {
      steps.push_back(*parsed->sample);
    }
  }
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  for (const telemetry::StepSample& s : steps) read.step_seconds.push_back(s.step_time_seconds);
  if (!steps.empty()) {
    read.first_step = steps.front().step;
    read.last_step = steps.back().step;
  }
  return read;
}

}  // namespace graintune::testing
