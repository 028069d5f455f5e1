// One control plane per test binary, started by the first test that asks for it and stopped at
// exit. When the binaries are not available the test is skipped with a loud message, unless
// GRAINTUNE_REQUIRE_CONTROLPLANE=1 (set by scripts/test.sh, so CI never skips): then it fails.
#pragma once

#include <gtest/gtest.h>

#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

enum class ControlPlaneKind {
  kApiServer,  // etcd + kube-apiserver
  kFull,       // + controller-manager, scheduler, KWOK
};

// nullptr with `*why` set when it cannot start.
ControlPlane* SharedControlPlane(ControlPlaneKind kind, std::string* why);

}  // namespace graintune::testing

// Use at the top of a test: binds `var` to the shared control plane or skips/fails loudly.
#define GRAINTUNE_USE_CONTROL_PLANE(var, kind)                                              \
  std::string graintune_cp_why_;                                                           \
  ::graintune::testing::ControlPlane* var =                                                \
      ::graintune::testing::SharedControlPlane(kind, &graintune_cp_why_);                  \
  if (!var) {                                                                              \
    const char* req_ = std::getenv("GRAINTUNE_REQUIRE_CONTROLPLANE");                       \
    if (req_ && std::string(req_) == "1") FAIL() << "control plane: " << graintune_cp_why_; \
    std::fprintf(stderr,                                                                   \
                 "\n*** SKIPPED: no control plane: %s ***\n*** run scripts/test.sh to build " \
                 "it; CI never skips this test ***\n\n",                                   \
                 graintune_cp_why_.c_str());                                               \
    GTEST_SKIP() << "no control plane: " << graintune_cp_why_;                             \
  }
