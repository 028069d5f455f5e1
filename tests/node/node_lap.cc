#include "tests/node/node_lap.h"

#include <fstream>
#include <sstream>

#include "tests/controlplane/maxtext_workload.h"
#include "tests/node/node_workloads.h"

namespace graintune::testing {

std::string LapPolicy(const std::string& ns, int max_workers) {
  return NamespacePolicy(ns, max_workers) +
         "  lap: {mode: Training, steps: 20, timeoutSeconds: 400, answerWaitSeconds: 120}\n";
}

int TrainerShellAfterLap(const std::string& pod_uid) {
  for (int pid : PodProcesses(pod_uid, "bash")) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::stringstream text;
    text << in.rdbuf();
    const std::string cmdline = text.str();
    if (cmdline.find(kMaxTextTrainerPattern) != std::string::npos &&
        cmdline.find(kLapRunNameWord) == std::string::npos)
      return pid;
  }
  return 0;
}

std::string PodAnnotation(const kube::Json& pod, const std::string& key) {
  const kube::Json annotations = pod.value("/metadata/annotations"_json_pointer, kube::Json::object());
  return annotations.is_object() ? annotations.value(key, std::string()) : std::string();
}

}  // namespace graintune::testing
