#include "tests/controlplane/shared_control_plane.h"

#include <cstdio>
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
  // Its ports are picked free and bound by the components a moment later; another process
  // (any outgoing connection's ephemeral port) may take one in between, and the component then
  // exits with "address already in use". That is the machine, not what a test checks: start
  // again on fresh ports, twice at most. A failed start stops what it had started.
  for (int again = 0; again < 2 && !cp.ok() &&
                      cp.error().find("address already in use") != std::string::npos;
       ++again) {
    std::fprintf(stderr, "control plane: a port was taken before it was bound; starting again\n");
    cp = ControlPlane::Start(o);
  }
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
