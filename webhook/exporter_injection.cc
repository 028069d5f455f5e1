#include "webhook/exporter_injection.h"

#include "workload/pod_templates.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

json& At(json& object, const std::string& pointer) { return object[json::json_pointer(pointer)]; }

}  // namespace

void InjectExporter(json& object, const std::string& spec_pointer,
                    const std::string& metadata_pointer, const std::string& trainer_pointer,
                    const workload::ContainerOverrides& trainer, const ExporterInjection& options,
                    std::vector<std::string>& warnings) {
  json& spec = At(object, spec_pointer);
  if (!spec.is_object()) return;
  for (const char* list : {"initContainers", "containers"})
    if (spec.contains(list) && spec[list].is_array())
      for (const json& c : spec[list])
        if (workload::StringField(c, "name") == kExporterContainerName) return;  // done before
  if (trainer.HasKey("metrics_file")) {
    warnings.push_back(
        "graintune: the job sets metrics_file itself, so no exporter was added; attempts will "
        "not be measured and grain_worker_count will not improve across restarts");
    return;
  }
  const std::string file = options.mount_path + "/" + kTrainerMetricsFileName;
  json& volumes = spec["volumes"];
  if (!volumes.is_array()) volumes = json::array();
  volumes.push_back({{"name", kMetricsVolumeName}, {"emptyDir", {{"sizeLimit", "64Mi"}}}});

  json& container = At(object, trainer_pointer);
  json& env = container["env"];
  if (!env.is_array()) env = json::array();
  env.push_back({{"name", workload::EnvNameForKey("metrics_file")}, {"value", file}});
  json& mounts = container["volumeMounts"];
  if (!mounts.is_array()) mounts = json::array();
  mounts.push_back({{"name", kMetricsVolumeName}, {"mountPath", options.mount_path}});

  const std::string port = std::to_string(options.port);
  json sidecar = {
      {"name", kExporterContainerName},
      {"image", options.image},
      {"restartPolicy", "Always"},
      // The exporter keeps the last step it read in the sidecar's termination message (the
      // kubelet's default path), where the operator finds it after the pod ended.
      {"args", {"--metrics-file", file, "--port", port, "--termination-message-path",
                "/dev/termination-log"}},
      // The exporter names its pod in every answer, so the operator never takes another pod's
      // figures for this one when a pod IP is reused.
      {"env", {{{"name", "GRAINTUNE_POD_UID"},
                {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}}},
      {"ports", {{{"name", "gt-metrics"}, {"containerPort", options.port}}}},
      {"volumeMounts", {{{"name", kMetricsVolumeName}, {"mountPath", options.mount_path},
                         {"readOnly", true}}}},
      {"readinessProbe", {{"httpGet", {{"path", "/healthz"}, {"port", options.port}}},
                          {"periodSeconds", 10}}},
      {"resources", {{"requests", {{"cpu", options.cpu_request}, {"memory", options.memory_request}}},
                     {"limits", {{"memory", options.memory_limit}}}}},
      {"securityContext", {{"allowPrivilegeEscalation", false},
                           {"readOnlyRootFilesystem", true},
                           {"runAsNonRoot", true},
                           {"runAsUser", 65532},
                           {"capabilities", {{"drop", {"ALL"}}}},
                           {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
  json& init = spec["initContainers"];
  if (!init.is_array()) init = json::array();
  init.push_back(std::move(sidecar));
  if (options.share_process_namespace && !spec.contains("shareProcessNamespace"))
    spec["shareProcessNamespace"] = true;
  json& meta = At(object, metadata_pointer);
  if (!meta.is_object()) meta = json::object();
  meta["annotations"]["graintune.dev/exporter-port"] = port;
}

std::vector<std::string> ExporterTouches(const std::string& spec_pointer,
                                         const std::string& metadata_pointer,
                                         const std::string& trainer_pointer) {
  return {spec_pointer + "/volumes", spec_pointer + "/initContainers",
          spec_pointer + "/shareProcessNamespace", trainer_pointer, metadata_pointer};
}

}  // namespace graintune::webhook
