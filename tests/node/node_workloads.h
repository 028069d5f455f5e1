// The workloads the node tests and the real-node demo run on the real node, and what they read
// back: a namespace with a GrainTunePolicy sized for this machine, a single-host (v6e 2x2)
// JobSet whose trainer runs a program of the test image, the pods of one JobSet attempt, and
// the host processes of a pod. Plain functions over the admin client and Pod JSON.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/settled_recommendation.h"

namespace graintune::testing {

// The pods in `ns` matching the label `selector` ("" for all); empty when the list fails.
std::vector<kube::Json> PodsWith(kube::Client& client, const std::string& ns, const std::string& selector);

// The pods of JobSet `jobset`'s restart attempt `attempt`.
std::vector<kube::Json> AttemptPods(kube::Client& client, const std::string& ns,
                                    const std::string& jobset, int attempt);

// Waits until JobSet `jobset`'s attempt `attempt` has exactly one pod and `ready(pod)` holds for
// it; returns that pod's last state (null when the wait ran out: the caller says why).
kube::Json WaitForAttemptPod(kube::Client& client, const std::string& ns, const std::string& jobset,
                             int attempt, const std::function<bool(const kube::Json&)>& ready,
                             std::chrono::seconds timeout);

bool PodReady(const kube::Json& pod);

// The pod's graintune.dev/worker-count annotation (0 when absent).
int WorkersOf(const kube::Json& pod);

// The value of env var `name` in container `container` of the pod ("" when absent).
std::string EnvOf(const kube::Json& pod, const std::string& container, const std::string& name);

// One line per container: what `kubectl get pod -o yaml` shows of its state, for the report.
std::string DescribeStatuses(const kube::Json& pod);

// GET `url` with curl (5 s at most); the body, or an error.
Result<std::string> HttpGet(const std::string& url);

// A namespace with a GrainTunePolicy named after it, sized for this machine: the real node has
// this machine's cores (2 in CI), so the policy leaves the trainer no reserved cpu or memory and
// the cpu budget is the node's cores; `max_workers` caps it below that when asked. Priority 10
// puts it above the chart's cluster-wide default (priority 0; a tie goes to the first name).
Status CreateNamespaceWithPolicy(ControlPlane& cp, const std::string& ns, int max_workers);

// A single-host (v6e 2x2) JobSet whose trainer container runs `trainer` from the test image:
// MaxText's settings as M_ environment variables (grain_worker_count=-1 among them), which the
// trainer's arguments (`args`, a YAML flow list) read through Kubernetes' $(VAR) expansion. Its
// workers are annotated at 32Mi each (graintune.dev/worker-memory), so the memory limits here
// bound no value.
std::string SingleHostJobSet(const std::string& ns, const std::string& name,
                             const std::string& test_image, const std::string& trainer,
                             const std::string& args, const std::string& memory_limit);

// Host processes (this machine's /proc) whose command line starts with `program` and that run
// in the cgroup of the pod with `pod_uid` (the kubelet's cgroupfs layout names pod<uid>).
std::vector<int> PodProcesses(const std::string& pod_uid, const std::string& program);

// A pod's trainer as this machine sees it: the container's first process (argv[0] `shell`; the
// outer one when the script starts subshells) in the pod's cgroup, and the first process below
// it whose command line holds `trainer_pattern` (process_tree.h's TrainerIn). Zeros until both
// are there.
struct PodTrainer {
  int shell = 0, trainer = 0;
};
PodTrainer FindPodTrainer(const std::string& pod_uid, const std::string& shell,
                          const std::string& trainer_pattern);

// The cluster DNS this node lacks, for one name: `name` resolves to the address of the pod of
// `pods` whose Job completion index is 0 (batch.kubernetes.io/job-completion-index), in every pod
// of `pods`, as CoreDNS answers a JobSet's headless-service names. Written into the /etc/hosts
// `node` keeps for each pod (RealNode::PodHostsFile) where it is missing: the kubelet writes that
// file anew at each container's start, so call it until the pods' trainers resolved the name. An
// error until that pod has an address.
Status ResolveInPods(const RealNode& node, const std::vector<kube::Json>& pods, const std::string& name);

}  // namespace graintune::testing
