// The node tests' images, written on the spot as OCI archives around the static node-tool (no
// registry, no base image): a pod sandbox image whose /pause is node-tool in pause mode, and an
// image whose entrypoint is /node-tool (its modes are its arguments; see node_tool.cc).
#pragma once

#include <string>

#include "tests/controlplane/real_node.h"

namespace graintune::testing {

inline constexpr char kPauseImage[] = "graintune.test/pause:1";
inline constexpr char kToolImage[] = "graintune.test/node-tool:1";

// Writes both archives into `dir` and returns real-node options that import them and use the
// pause image as the sandbox; an error when a file cannot be written. When the environment names
// scripts/image.sh's pause image (GRAINTUNE_PAUSE_IMAGE_ARCHIVE and GRAINTUNE_PAUSE_IMAGE_REF, as
// it prints them), that archive is the sandbox instead.
Result<RealNodeOptions> TestNodeOptions(const std::string& node_tool_bin, const std::string& dir);

}  // namespace graintune::testing
