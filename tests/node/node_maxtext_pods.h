// MaxText's pods as containers on the harness's real node (maxtext_pods.h): the tiny JobSet runs
// `image` with the pinned MaxText environment of this machine mounted read-only (OnRealNode);
// the container's shell is found in the pod's cgroup, MaxText's metrics file in the kubelet's
// emptyDir, its log through `kubectl logs`, and an attempt fails by SIGKILL to MaxText (exit 137).
#pragma once

#include <string>

#include "tests/controlplane/maxtext_pods.h"

namespace graintune::testing {

class NodeMaxTextPods : public MaxTextPods {
 public:
  // `memory_limit`: the MaxText container's limit (a Kubernetes quantity).
  NodeMaxTextPods(ControlPlane& cp, MaxTextEnv env, std::string image, std::string memory_limit = "16Gi")
      : cp_(cp), env_(std::move(env)), image_(std::move(image)), memory_limit_(std::move(memory_limit)) {}
  Result<TinyJobSetOptions> Place(TinyJobSetOptions options) const override;
  int ShellPid(const kube::Json& pod) const override;
  std::string MetricsFile(const kube::Json& pod) const override;
  std::string LogTail(const kube::Json& pod) const override;
  Result<std::string> Fail(const kube::Json& pod, int trainer_pid) const override;

 private:
  ControlPlane& cp_;
  MaxTextEnv env_;
  std::string image_, memory_limit_;
};

}  // namespace graintune::testing
