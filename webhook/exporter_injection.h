// The graintune-exporter sidecar the webhook adds to a tuned pod template (Job templates and
// Pods; a JobSet's templates get it when its child Jobs are created):
//   - an emptyDir volume graintune-metrics, mounted in the trainer and the sidecar;
//   - MaxText's metrics_file pointed into it through M_METRICS_FILE, unless the job sets
//     metrics_file itself (then nothing is injected and a warning says trials cannot be
//     measured: graintune never overrides a setting the user wrote);
//   - a native sidecar (init container, restartPolicy Always) running graintune-exporter, so it
//     never keeps a Job's pod alive; its port is configurable (hostNetwork pods);
//   - the annotation graintune.dev/exporter-port, read by the operator;
//   - optionally shareProcessNamespace, so the exporter sees Grain's worker processes.
// Idempotent: a template that already has the sidecar is left alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload/container_overrides.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {

using workload::kExporterContainerName;
inline constexpr char kMetricsVolumeName[] = "graintune-metrics";
// The trainer's metrics file in that volume (M_METRICS_FILE): the exporter follows it, and after
// a practice lap graintune-launcher's compile-cache watch waits for its first step.
inline constexpr char kTrainerMetricsFileName[] = "metrics.jsonl";

struct ExporterInjection {
  std::string image = "ghcr.io/graintune/graintune-exporter:0.1.0";
  int port = 9431;
  std::string mount_path = "/graintune-metrics";
  bool share_process_namespace = false;
  // The sidecar's resources (Kubernetes quantities, checked by whoever sets them): it reads one
  // small file and answers a scrape every few seconds.
  std::string cpu_request = "10m";
  std::string memory_request = "32Mi";
  std::string memory_limit = "64Mi";
};

// `spec_pointer` / `metadata_pointer`: the pod template's spec and metadata in `object`;
// `trainer_pointer`: the MaxText container (absolute pointer).
void InjectExporter(nlohmann::json& object, const std::string& spec_pointer,
                    const std::string& metadata_pointer, const std::string& trainer_pointer,
                    const workload::ContainerOverrides& trainer, const ExporterInjection& options,
                    std::vector<std::string>& warnings);

// Every pointer InjectExporter may write under, for the patch (scoped_patch.h): the spec's
// volumes, initContainers and shareProcessNamespace, the trainer and the template's metadata.
std::vector<std::string> ExporterTouches(const std::string& spec_pointer,
                                         const std::string& metadata_pointer,
                                         const std::string& trainer_pointer);

}  // namespace graintune::webhook
