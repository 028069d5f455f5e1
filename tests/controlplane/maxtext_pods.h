// Where MaxText's pods run for the MaxText demo (demo_maxtext_story.h): how the tiny JobSet is
// placed, and how this machine reaches what a pod does: the container's shell process (MaxText
// and its Grain workers are below it), MaxText's metrics file, its log, and how an attempt is
// made to fail. Two kinds: the stand-in kubelet's processes (StandInMaxTextPods, here) and the
// real node's containers (tests/node/node_maxtext_pods.h).
#pragma once

#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/pod_runner.h"

namespace graintune::testing {

class MaxTextPods {
 public:
  virtual ~MaxTextPods() = default;
  // `options` (namespace, name, steps) placed on this kind of node.
  virtual Result<TinyJobSetOptions> Place(TinyJobSetOptions options) const = 0;
  // The pid of the pod's container shell once MaxText runs below it; 0 before.
  virtual int ShellPid(const kube::Json& pod) const = 0;
  // MaxText's metrics file of the pod, as a path on this machine.
  virtual std::string MetricsFile(const kube::Json& pod) const = 0;
  // The end of the container's output, for a report.
  virtual std::string LogTail(const kube::Json& pod) const = 0;
  // Makes the attempt fail (its trainer at `trainer_pid`), so JobSet restarts the slice; what
  // was done, for the story.
  virtual Result<std::string> Fail(const kube::Json& pod, int trainer_pid) const = 0;
};

// The stand-in kubelet's pods (pod_runner.h, started with MaxTextTrainer): MaxText runs as a
// process of this machine; an attempt fails by the runner's test-terminate annotation.
class StandInMaxTextPods : public MaxTextPods {
 public:
  StandInMaxTextPods(ControlPlane& cp, PodRunner& runner) : cp_(cp), runner_(runner) {}
  Result<TinyJobSetOptions> Place(TinyJobSetOptions options) const override;
  int ShellPid(const kube::Json& pod) const override;
  std::string MetricsFile(const kube::Json& pod) const override;
  std::string LogTail(const kube::Json& pod) const override;
  Result<std::string> Fail(const kube::Json& pod, int trainer_pid) const override;

 private:
  ControlPlane& cp_;
  PodRunner& runner_;
};

}  // namespace graintune::testing
