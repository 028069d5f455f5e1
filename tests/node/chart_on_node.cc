#include "tests/node/chart_on_node.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "tests/controlplane/child_process.h"

namespace graintune::testing {

namespace fs = std::filesystem;
using kube::Json;

namespace {

Result<Json> ArchiveMember(const std::string& archive, const std::string& member) {
  Result<std::string> text =
      RunShell("tar -xOf '" + archive + "' '" + member + "'", "reading " + member + " of " + archive);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Error(member + " of " + archive + " is not JSON");
  return j;
}

// The API server's port, from the admin client's server URL (https://127.0.0.1:PORT).
std::string ApiServerPort(const ControlPlane& cp) {
  const std::string& server = cp.admin_config().server;
  return server.substr(server.rfind(':') + 1);
}

}  // namespace

Result<BuiltImages> BuiltImagesFromEnvironment() {
  BuiltImages images;
  const std::pair<const char*, std::string*> vars[] = {
      {"GRAINTUNE_IMAGE_ARCHIVE", &images.archive},
      {"GRAINTUNE_IMAGE_REF", &images.ref},
      {"GRAINTUNE_TEST_IMAGE_ARCHIVE", &images.test_archive},
      {"GRAINTUNE_TEST_IMAGE_REF", &images.test_ref},
      {"GRAINTUNE_PAUSE_IMAGE_ARCHIVE", &images.pause_archive},
      {"GRAINTUNE_PAUSE_IMAGE_REF", &images.pause_ref},
      {"GRAINTUNE_IMAGE_SOURCE_HASH", &images.source_hash}};
  for (const auto& [name, out] : vars) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0')
      return Status::Error(std::string(name) + " is not set: eval \"$(bash scripts/image.sh)\" first");
    *out = v;
  }
  for (const std::string* a : {&images.archive, &images.test_archive, &images.pause_archive})
    if (!fs::exists(*a)) return Status::Error("no image archive " + *a);
  return images;
}

Result<ArchivedImage> ReadArchivedImage(const std::string& archive) {
  Result<Json> index = ArchiveMember(archive, "index.json");
  if (!index.ok()) return index.status();
  ArchivedImage image;
  image.manifest_digest = index->value("/manifests/0/digest"_json_pointer, "");
  if (image.manifest_digest.rfind("sha256:", 0) != 0) return Status::Error("no manifest in " + archive);
  Result<Json> manifest = ArchiveMember(archive, "blobs/sha256/" + image.manifest_digest.substr(7));
  if (!manifest.ok()) return manifest.status();
  image.config_digest = manifest->value("/config/digest"_json_pointer, "");
  if (image.config_digest.rfind("sha256:", 0) != 0) return Status::Error("no config in " + archive);
  Result<Json> config = ArchiveMember(archive, "blobs/sha256/" + image.config_digest.substr(7));
  if (!config.ok()) return config.status();
  image.labels = config->value("/config/Labels"_json_pointer, Json::object());
  return image;
}

Status HelmInstallOnNode(ControlPlane& cp, const std::string& chart_dir, const std::string& image_ref) {
  const std::string repository = image_ref.substr(0, image_ref.rfind(':'));
  const std::string tag = image_ref.substr(image_ref.rfind(':') + 1);
  Result<int> webhook_port = FreeLoopbackPort(), webhook_probe = FreeLoopbackPort(),
              operator_probe = FreeLoopbackPort();
  if (!webhook_port.ok()) return webhook_port.status();
  if (!webhook_probe.ok()) return webhook_probe.status();
  if (!operator_probe.ok()) return operator_probe.status();
  const std::string api_env = R"([{"name":"KUBERNETES_SERVICE_HOST","value":"127.0.0.1"},)"
                              R"({"name":"KUBERNETES_SERVICE_PORT","value":")" +
                              ApiServerPort(cp) + R"("}])";
  return cp.Helm(
      {"install", kRelease, chart_dir, "--namespace", kReleaseNamespace, "--create-namespace",
       "--wait", "--timeout", "180s",
       "--set", "image.repository=" + repository, "--set", "image.tag=" + tag,
       "--set", "image.pullPolicy=IfNotPresent",
       "--set", "webhook.replicas=1", "--set", "operator.replicas=1",
       "--set", "webhook.hostNetwork=true", "--set", "operator.hostNetwork=true",
       "--set", "webhook.port=" + std::to_string(*webhook_port),
       "--set", "webhook.probePort=" + std::to_string(*webhook_probe),
       "--set", "operator.probePort=" + std::to_string(*operator_probe),
       "--set", "operator.resyncPeriodMs=500", "--set", "operator.statusProgressIntervalMs=1000",
       "--set", "webhook.exporter.shareProcessNamespace=true",
       "--set-json", "webhook.extraEnv=" + api_env, "--set-json", "operator.extraEnv=" + api_env})
      .status();
}

ControlPlaneOptions WithChartImagesOnNode(ControlPlaneOptions env, const BuiltImages& images) {
  env.jobset = true;
  env.real_node = RealNodeOptions{.images = {images.pause_archive, images.archive, images.test_archive},
                                  .sandbox_image = images.pause_ref};
  return env;
}

}  // namespace graintune::testing
