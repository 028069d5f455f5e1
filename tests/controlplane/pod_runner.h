// A stand-in kubelet for graintune's pods on KWOK nodes: KWOK marks pods Running but runs
// nothing, so this runs, on this machine, what the pod would: the graintune-exporter sidecar
// the webhook injected (with its own arguments, bound to the pod's IP inside 127.0.0.0/8) and a
// trainer: the trainer emulator fed the worker count the pod was given, or the pod's own
// trainer container (own_trainer: real MaxText, say). It follows the pods (a poll at every change
// a watch of them sees, and every 300 ms) and stops a pod's processes, with everything they
// started, when the pod stops running: as soon as it can, since KWOK hands a freed pod IP to the
// next pod at once, and until the old exporter is gone the operator's scrape of the new pod's
// address reaches it (and rightly refuses its answer, which names another pod).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

// Runs the container of the pod that graintune rewrote (the one with the worker-count
// annotation's value in its command or env) as the container runtime would: its command and
// args as argv (the first looked up on PATH), its literal env values, then `env` on top
// (PATH to a Python environment, JAX_PLATFORMS=cpu). The metrics volume's mount path is this
// pod's folder here, in env values and arguments alike. The exporter then reads this
// machine's /proc as if it shared the pod's PID namespace, so run one such pod at a time.
struct OwnTrainer {
  std::vector<std::string> env;
  // The exporter's --trainer-pattern: this machine's /proc holds more than the pod's processes
  // (the test itself, whose command line may name the trainer too), so a pattern only the
  // trainer's command line holds stands in for the pod's own PID namespace.
  std::string trainer_pattern;
  // HOME is a folder of the pod's here, as a container's home is its own: what the trainer and
  // graintune-launcher keep under ~ (JAX's compilation cache) is then not this machine's.
  bool own_home = false;
};

// Pods whose trainer graintune-launcher wraps for a practice lap (webhook/lap_injection.h: the
// lap's answer volume) run their own command here, launcher and all, as an OwnTrainer does,
// whatever runs the other pods: the installer init container is `launcher_binary --install` into
// the pod's emptyDir, and the downward-API file of the lap's answer follows the pod's annotation
// every poll, as the kubelet refreshes it. `trainer.env` puts a MaxText (or a stand-in) on PATH
// for the pod's command.
struct LappedPods {
  std::string launcher_binary;
  OwnTrainer trainer;
};

struct PodRunnerOptions {
  std::string exporter_binary;
  std::string trainer_binary;  // the emulator; unused with own_trainer
  double time_scale = 0.05;
  int steps = 40;
  std::optional<OwnTrainer> own_trainer;
  // graintune-launcher, which the installer init container copies into the pod of an own_trainer
  // that it wraps for the start check alone (no lap). Needed when the webhook wraps trainers.
  std::string launcher_binary;
  std::optional<LappedPods> lapped;
  std::string ns;  // only this namespace's pods; empty: every namespace
};

class PodRunner {
 public:
  PodRunner(ControlPlane& cp, PodRunnerOptions options);
  ~PodRunner();
  void Start();
  void Stop();
  // Pods whose processes were started so far (by name).
  std::vector<std::string> Started() const;
  // The trainer's process id for a running pod (by name), e.g. to count what it started.
  std::optional<int> TrainerPid(const std::string& pod_name) const;
  // The pod's folder here (its logs, metrics file), by name; empty before it started.
  std::string PodDir(const std::string& pod_name) const;

 private:
  void Poll();
  // A downward-API file of the pod's: `file` holds the pod's annotation `annotation`.
  struct DownwardFile {
    std::string file, annotation;
  };
  struct Running {
    std::string name, dir, ip;
    std::vector<DownwardFile> downward;
    ChildProcess exporter, trainer;
  };
  // The pod's own trainer container, from its spec and the exporter sidecar found in it, run as
  // `own` says; its downward-API files are added to `running` and written.
  Result<ChildProcess> StartOwnTrainer(const kube::Json& pod, const kube::Json& sidecar,
                                       const OwnTrainer& own, Running& running) const;
  // Writes the pod's downward-API files that differ from its `annotations` now.
  static void WriteDownwardFiles(const Running& running, const kube::Json& annotations);
  ControlPlane& cp_;
  PodRunnerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Running>> running_;  // by pod uid
  std::vector<std::string> started_;
  // The watch's wake-up of the poll loop (one thread polls, so no older list undoes a newer one).
  std::mutex wake_mu_;
  std::condition_variable_any wake_;
  bool woken_ = false;
  std::jthread thread_, watch_;
};

}  // namespace graintune::testing
