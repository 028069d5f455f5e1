// What the operator reads from a pod graintune manages (label graintune.dev/managed=true):
// which tuning key and attempt it belongs to, the value it got, where its exporter listens,
// and how it ended. Pure functions over the Pod object.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace graintune::op {

// The exporter's default port; pods may say otherwise with graintune.dev/exporter-port.
inline constexpr int kDefaultExporterPort = 9431;
inline constexpr char kExporterPortAnnotation[] = "graintune.dev/exporter-port";

struct PodFacts {
  std::string ns, name, uid;
  std::string tuning_key;
  int attempt = 0;
  int workers = 0;           // graintune.dev/worker-count; 0 when absent or not a number
  std::string phase;         // Pending, Running, Succeeded, Failed
  std::string pod_ip;
  int exporter_port = kDefaultExporterPort;
  bool oom_killed = false;   // a container's current or last state was OOMKilled
  std::string owner_kind;    // JobSet, Job or Pod: the workload the key came from
  std::string owner_name;
  std::string dataset;       // graintune.dev/dataset
  // graintune.dev/learned-from: the GrainTunings ("namespace/name") whose learned figures set
  // the pod's value.
  std::vector<std::string> learned_from;
  std::string created;       // metadata.creationTimestamp
  std::string started;       // status.startTime
  bool terminating = false;  // metadata.deletionTimestamp is set
  // What the webhook read of the run (workload/run_resume.h): whether a resume restores Grain's
  // iterator (the run keeps its value), its checkpoint directory and configured steps.
  bool pins_workers = false;
  std::string checkpoint_dir;
  std::optional<long> steps;
  // Its practice lap (docs/practice-lap.md): the seconds its launcher waits for the run's value
  // after the lap (0: the pod runs no lap), and the answer it was given (the
  // graintune.dev/lap-value annotation; nullopt: none yet). When the answer is a value, that is
  // the value the pod's trainer runs with (`workers`); `admission_workers` keeps admission's.
  int lap_answer_wait_seconds = 0;
  std::optional<std::string> lap_answer;
  int admission_workers = 0;
  // The last training step the exporter saw, from its termination message (the exporter
  // writes it as MaxText goes; the kubelet puts it in the sidecar's terminated state).
  std::optional<long> last_step;

  // Pending or Running and not being deleted: its attempt is still under way.
  bool Alive() const { return !terminating && (phase == "Pending" || phase == "Running"); }
  // It runs a lap and waits for the run's value, which nobody gave it yet.
  bool AwaitsLapAnswer() const { return lap_answer_wait_seconds > 0 && !lap_answer; }
};

PodFacts PodFactsFromJson(const nlohmann::json& pod);

}  // namespace graintune::op
