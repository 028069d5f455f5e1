// A stand-in kubelet for graintune's pods on KWOK nodes: KWOK marks pods Running but runs
// nothing, so this runs, on this machine, what the pod would: the graintune-exporter sidecar
// the webhook injected (with its own arguments, bound to the pod's IP inside 127.0.0.0/8) and a
// trainer emulator in place of MaxText, fed the worker count the pod was given. It follows the
// pods every poll and stops a pod's processes when the pod stops running.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

struct PodRunnerOptions {
  std::string exporter_binary;
  std::string trainer_binary;
  double time_scale = 0.05;
  int steps = 40;
};

class PodRunner {
 public:
  PodRunner(ControlPlane& cp, PodRunnerOptions options);
  ~PodRunner();
  void Start();
  void Stop();
  // Pods whose processes were started so far (by name).
  std::vector<std::string> Started() const;

 private:
  void Poll();
  struct Running {
    std::string name;
    ChildProcess exporter, trainer;
  };
  ControlPlane& cp_;
  PodRunnerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Running>> running_;  // by pod uid
  std::vector<std::string> started_;
  std::jthread thread_;
};

}  // namespace graintune::testing
