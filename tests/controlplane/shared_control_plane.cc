#include "tests/controlplane/shared_control_plane.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "tests/controlplane/failure_logs.h"

namespace graintune::testing {
namespace {

// The full names of this binary's tests that failed, joined with ','; empty when none did (read
// at exit, when no test is current any more).
std::string FailedTestNames() {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  std::string names;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(j);
      if (test.result()->Failed()) names += (names.empty() ? "" : ",") + std::string(suite.name()) + "." + test.name();
    }
  }
  return names;
}

}  // namespace

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
    // A failed test's control plane leaves its logs behind (failure_logs.h) before it stops.
    std::atexit([] {
      if (const std::string failed = FailedTestNames(); !failed.empty())
        for (auto& [started_kind, started_cp] : *started)
          SaveLogsOfFailure(*started_cp, failed + (started_kind == ControlPlaneKind::kFull ? "-full" : "-apiserver"));
      started->clear();
    });
  }
  return ((*started)[kind] = std::move(cp).value()).get();
}

}  // namespace graintune::testing
