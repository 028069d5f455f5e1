#include "tests/controlplane/shared_control_plane.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace graintune::testing {

ControlPlane* SharedControlPlane(ControlPlaneKind kind, std::string* why) {
  static std::mutex mu;
  // Heap-held and stopped by an atexit handler registered after the first start: that runs
  // before the static objects the client libraries made during the start are destroyed.
  static auto* started = new std::map<ControlPlaneKind, std::unique_ptr<ControlPlane>>();
  static std::map<ControlPlaneKind, std::string> failures;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = started->find(kind); it != started->end()) return it->second.get();
  if (auto it = failures.find(kind); it != failures.end()) {
    *why = it->second;
    return nullptr;
  }
  Result<ControlPlaneOptions> options = OptionsFromEnvironment();
  if (!options.ok()) {
    *why = failures[kind] = options.error();
    return nullptr;
  }
  ControlPlaneOptions o = *options;
  // graintune's own CRDs, from the source tree, beside JobSet's.
  for (const char* crd : {"graintune.dev_graintunepolicies.yaml", "graintune.dev_graintunings.yaml"})
    o.crd_files.push_back(std::string(GRAINTUNE_CRD_DIR) + "/" + crd);
  if (kind == ControlPlaneKind::kFull) {
    o.controllers = true;
    o.kwok = true;
    o.jobset = true;
    o.kwok_stages_file = GRAINTUNE_KWOK_STAGES_FILE;
  }
  Result<std::unique_ptr<ControlPlane>> cp = ControlPlane::Start(o);
  if (!cp.ok()) {
    *why = failures[kind] = cp.error();
    return nullptr;
  }
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] { started->clear(); });
  }
  return ((*started)[kind] = std::move(cp).value()).get();
}

}  // namespace graintune::testing
