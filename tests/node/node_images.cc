#include "tests/node/node_images.h"

#include <cstdlib>

#include "tests/controlplane/oci_archive.h"

namespace graintune::testing {

Result<RealNodeOptions> TestNodeOptions(const std::string& node_tool_bin, const std::string& dir) {
  const std::string pause = dir + "/pause.tar", tool = dir + "/node-tool.tar";
  for (Status s : {WriteOciArchive({.reference = kPauseImage,
                                    .files = {{node_tool_bin, "pause"}},
                                    .entrypoint = {"/pause", "pause"}},
                                   pause),
                   WriteOciArchive({.reference = kToolImage,
                                    .files = {{node_tool_bin, "node-tool"}},
                                    .entrypoint = {"/node-tool"}},
                                   tool)})
    if (!s.ok()) return s;
  const char* archive = std::getenv("GRAINTUNE_PAUSE_IMAGE_ARCHIVE");
  const char* ref = std::getenv("GRAINTUNE_PAUSE_IMAGE_REF");
  if (archive && *archive && ref && *ref)
    return RealNodeOptions{.images = {archive, tool}, .sandbox_image = ref};
  return RealNodeOptions{.images = {pause, tool}, .sandbox_image = kPauseImage};
}

}  // namespace graintune::testing
