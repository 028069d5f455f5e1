// graintune installed on the harness's real node the way a user installs it: `helm install` of
// charts/graintune with the images scripts/image.sh builds from the Dockerfile (OCI archives
// imported into the node's containerd; no registry). Shared by the node tests and the real-node
// demo.
//
// The node has no kube-proxy and pods on its bridge cannot reach the API server (127.0.0.1), so
// the chart's pods run with hostNetwork and KUBERNETES_SERVICE_HOST/PORT pointing at the API
// server (the chart's hostNetwork and extraEnv values), one replica each, on free loopback ports.
#pragma once

#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

inline constexpr char kRelease[] = "gt";
inline constexpr char kReleaseNamespace[] = "graintune-system";

// scripts/image.sh's output, from the environment (as it prints it).
struct BuiltImages {
  std::string archive, ref, test_archive, test_ref, pause_archive, pause_ref, source_hash;
};

// An error names the first variable missing or archive absent.
Result<BuiltImages> BuiltImagesFromEnvironment();

// `env` with the JobSet controller and a real node whose containerd holds the images (the pause
// image its sandbox): the control plane the chart's node tests and the real-node demo start.
ControlPlaneOptions WithChartImagesOnNode(ControlPlaneOptions env, const BuiltImages& images);

// An OCI archive's single image: its manifest and config digests ("sha256:...") and labels.
struct ArchivedImage {
  std::string manifest_digest, config_digest;
  kube::Json labels;
};

Result<ArchivedImage> ReadArchivedImage(const std::string& archive);

// `helm install` of the chart at `chart_dir` as release kRelease in kReleaseNamespace, with
// `image_ref` (already imported into the node), waiting (up to 180 s) until its pods are Ready.
// The operator re-reads its workloads every 500 ms so a short demo or test is not kept waiting.
Status HelmInstallOnNode(ControlPlane& cp, const std::string& chart_dir, const std::string& image_ref);

}  // namespace graintune::testing
