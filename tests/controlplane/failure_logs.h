// What a failed test or demo leaves behind for whoever reads the failure: every log file under a
// control plane's folder (its components', the webhook's and operator's, each stand-in pod's
// trainer and exporter) copied before the folder is removed, so a failure on a machine nobody
// can log into is read without running it again.
//
// Where: $GRAINTUNE_TEST_LOG_DIR/<name>/ (scripts/test.sh sets it to <build dir>/test-logs), each
// file at its path relative to the control plane's folder and cut to its last 4 MiB. Without the
// variable the control plane's folder itself is kept (ControlPlane::KeepDir). Either way the
// folder is printed on stderr, with the last lines of the API server's and the operator's logs.
// Errors (a folder that cannot be written) are printed, never thrown.
#pragma once

#include <string>

#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

// Saves `cp`'s logs under `name` (a test's or the demo's name; '/' and spaces become '_').
// Returns the folder that holds them.
std::string SaveLogsOfFailure(ControlPlane& cp, const std::string& name);

}  // namespace graintune::testing
