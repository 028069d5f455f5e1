// graintune-operator as the e2e tests run it against the local control plane: the real binary
// with the admin kubeconfig, a short resync period, trial progress written each second (so a
// test sees samples grow as they are read) and short leader-election timings (so a
// failover test sees a new leader in seconds), /metrics on a free loopback port, its log in
// the control plane's folder as operator-<identity>.log.
#pragma once

#include <string>

#include "tests/controlplane/child_process.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

// `metrics_port`: set to where its /metrics is served, when the caller wants to read them.
Result<ChildProcess> StartOperatorUnderTest(ControlPlane& cp, const std::string& binary,
                                            const std::string& identity, int* metrics_port = nullptr);

}  // namespace graintune::testing
