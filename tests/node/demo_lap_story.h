// The real-node demo's practice lap (`scripts/demo.sh --real-node --trainer maxtext`, after the
// MaxText story): a new run of the tiny MaxText JobSet that checkpoints, in a namespace whose
// GrainTunePolicy asks for a training lap. The webhook wraps its trainer with graintune-launcher;
// the lap runs MaxText's own command for a few steps with admission's value, off the run; the
// exporter reports it, the operator decides the run's value from it, records it in status.lap
// and writes it on the pod; the trainer then starts with that value.
#pragma once

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/node/node_maxtext_pods.h"

namespace graintune::testing::demo {

// Step `step` of the demo. The exit code: 0 when the trainer started with the value the lap
// gave, 1 when a step did not happen, 130 when interrupted.
int TellLapStory(ControlPlane& cp, const NodeMaxTextPods& pods, const MaxTextEnv& maxtext, int step);

}  // namespace graintune::testing::demo
