// The scale benchmark's cluster: KWOK TPU Nodes and the workloads driven against graintune.
//
// Shape: `jobsets` JobSets of `hosts_per_jobset` v5p hosts each (xpk's Llama3-8B JobSet from
// examples/, grain_worker_count=-1, one pod per host, 4 chips each) and `singles` single-host
// v5e Jobs (M_GRAIN_WORKER_COUNT=-1), each on Nodes of its own: hosts + singles Nodes in all.
// Everything lives in namespace kNamespace. A restart fails one pod of every workload (the
// KWOK stage's graintune.dev/test-terminate annotation): a JobSet restarts its whole slice
// (jobset.sigs.k8s.io/restart-attempt + 1), a Job retries its pod (graintune's next attempt).
//
// Errors as values, quoting kubectl or the API server.
#pragma once

#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::bench {

inline constexpr char kNamespace[] = "scale";

struct ScaleShape {
  int jobsets = 8;
  int hosts_per_jobset = 256;  // a power of two, >= 2
  int singles = 100;

  int hosts() const { return jobsets * hosts_per_jobset; }
  int pods() const { return hosts() + singles; }
  int workloads() const { return jobsets + singles; }
};

// The tuning keys (workload names) of the shape, and how many pods each runs.
std::string JobSetName(int i);
std::string SingleJobName(int i);
std::vector<std::pair<std::string, int>> WorkloadsOf(const ScaleShape& shape);

// Creates the Nodes with one `kubectl create` of a List.
Status CreateNodes(testing::ControlPlane& cp, const ScaleShape& shape);

// Creates the namespace and every workload. `jobset_example`: the xpk JobSet manifest's text.
Status CreateWorkloads(testing::ControlPlane& cp, const ScaleShape& shape,
                       const std::string& jobset_example);

// Fails the given pods (KWOK ends them with exit code 1): one per workload restarts them all.
Status FailOnePodOfEach(testing::ControlPlane& cp, const std::vector<kube::Json>& pods);

// The index of a pod inside its workload: its Job completion index, or the number in its single
// Job's name; -1 when neither.
int PodIndexInWorkload(const kube::Json& pod);

// Why pods are not running, for a benchmark that stopped waiting: the namespace's pods by phase
// (terminating apart), the scheduler's distinct reasons for those it could not place, and the
// Nodes by Ready status and taint. Best effort: what kubectl could not list is said as such.
std::string SchedulingPicture(testing::ControlPlane& cp);

}  // namespace graintune::bench
