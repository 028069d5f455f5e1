// A single-layer OCI image archive (the layout `ctr images import` and `skopeo` read: oci-layout,
// index.json, blobs/sha256/...) written from a few host files, for the real node's tests: an
// image with no registry, no shell and no base image, only the static programs a test runs.
//
// The layer is an uncompressed tar of regular files at the image root (mode 0755, owner 0:0);
// the config names the entrypoint. The index carries the reference both as containerd's
// `io.containerd.image.name` (so `ctr images import` tags it) and as the OCI ref name.
//
// Contract: returns an error naming the file when a host file cannot be read or the archive
// cannot be written; the archive is complete or absent (written to a temporary name and renamed).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace graintune::testing {

struct OciImageFile {
  std::string host_path;   // a file on this machine
  std::string image_path;  // where it appears in the image, relative to the root: "pause"
};

struct OciImage {
  std::string reference;  // fully qualified: "registry.graintune.test/pause:1"
  std::vector<OciImageFile> files;
  std::vector<std::string> entrypoint;  // e.g. {"/pause"}
  std::vector<std::string> cmd;
};

Status WriteOciArchive(const OciImage& image, const std::string& archive_path);

}  // namespace graintune::testing
