// What the node tests share: whether a missing part fails or skips them, the control plane
// options a real node needs, reading container statuses out of a Pod, and the check that a
// stopped node left the host as it found it.
//
// Under GRAINTUNE_REQUIRE_CONTROLPLANE=1 (scripts/test.sh) a missing part (root, kubelet,
// containerd, an image archive) fails a test; otherwise it is skipped with a loud line on stderr.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/host_footprint.h"

namespace graintune::testing {

inline bool NodePartsRequired() {
  const char* r = std::getenv("GRAINTUNE_REQUIRE_CONTROLPLANE");
  return r && std::string(r) == "1";
}

// Fails under GRAINTUNE_REQUIRE_CONTROLPLANE=1, else skips loudly. Use in a TEST body only.
#define SKIP_OR_FAIL_NODE(why)                                                                 \
  do {                                                                                         \
    if (::graintune::testing::NodePartsRequired()) FAIL() << "real node: " << (why);           \
    std::fprintf(stderr, "\n*** SKIPPED: no real node: %s ***\n\n", std::string(why).c_str()); \
    GTEST_SKIP() << (why);                                                                     \
  } while (0)

// What a real node needs: the control plane's options, or why not (root, kubelet, containerd).
inline Result<ControlPlaneOptions> NodeEnvironment() {
  Result<ControlPlaneOptions> env = OptionsFromEnvironment();
  if (!env.ok()) return env;
  if (::geteuid() != 0) return Status::Error("the real node needs root");
  if (::access((env->bin_dir + "/kubelet").c_str(), X_OK) != 0)
    return Status::Error("no kubelet in " + env->bin_dir + ": run scripts/controlplane/build.sh");
  if (::access("/usr/bin/containerd", X_OK) != 0)
    return Status::Error("no containerd: run scripts/setup.sh");
  return env;
}

// The status of container `name` among the pod's `list` (containerStatuses,
// initContainerStatuses); null when absent.
inline kube::Json ContainerStatusOf(const kube::Json& pod, const std::string& list,
                                    const std::string& name) {
  for (const kube::Json& s :
       pod.value("status", kube::Json::object()).value(list, kube::Json::array()))
    if (s.value("name", "") == name) return s;
  return nullptr;
}

inline bool IsRunning(const kube::Json& status) {
  return status.is_object() && status.value("state", kube::Json::object()).contains("running");
}

// Expects the host as `before` (sysctls, mounts, network, processes: HostFootprint) once the
// control plane that ran in `cp_dir` has stopped, and `cp_dir` gone. Use in a TEST body only.
inline void ExpectHostAsBefore(const HostFootprint& before, const std::string& cp_dir) {
  std::string listed;
  for (const std::string& d : HostDifferences(before, CaptureHostFootprint())) listed += "  " + d + "\n";
  EXPECT_EQ(listed, "") << "the host differs after the node stopped:\n" << listed;
  EXPECT_FALSE(std::filesystem::exists(cp_dir)) << cp_dir;
}

}  // namespace graintune::testing
