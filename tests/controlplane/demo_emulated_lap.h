// The local demo's practice lap (`scripts/demo.sh`, after the Llama3-8B story): the example
// Llama3-8B JobSet as a new run on one v6e-4 host (ct6e-standard-4t, topology 2x2), in a
// namespace whose GrainTunePolicy asks for a training lap. The webhook wraps its trainer with
// graintune-launcher; the stand-in kubelet (pod_runner.h) runs the pod's own command, launcher
// and all, with maxtext_standin as MaxText: a trainer whose forked workers really spend cpu on
// every record. The lap runs that command for a few steps with admission's value, graintune's
// exporter measures it in /proc, the operator decides the run's value from it and writes it on
// the pod, and the trainer starts with that value.
#pragma once

#include <string>

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/pod_runner.h"

namespace graintune::testing::demo {

// How the stand-in kubelet runs the lapped pods: `build_dir`'s graintune-launcher, and a
// `python3` on PATH (written under the control plane's folder) that runs maxtext_standin with a
// pipeline that needs about half a core. Errors: the folder cannot be written.
Result<LappedPods> EmulatedLapPods(const ControlPlane& cp, const std::string& build_dir);

// Step `step` of the demo, telling the lap from `example` (the Llama3-8B v6e-32 JobSet's text).
// The exit code: 0 when the trainer started with the value the lap gave, 1 when a step did not
// happen, 130 when interrupted.
int TellEmulatedLapStory(ControlPlane& cp, const PodRunner& runner, const std::string& example, int step);

}  // namespace graintune::testing::demo
