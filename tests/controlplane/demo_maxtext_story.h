// `graintune-demo --trainer maxtext` (scripts/demo.sh --trainer maxtext): the demo's story with
// MaxText's own trainer instead of the emulator. A one-host JobSet (MaxTextHost: a TPU host
// shaped like this machine) trains a tiny model in maxtext 0.2.5 on this machine's CPU, on a
// pipeline where tokenizing 512 KiB records binds, with grain_worker_count=-1; the stand-in
// kubelet runs the command graintune rewrote through bash, MaxText starts that many Grain worker
// processes and writes its own metrics file, graintune-exporter follows it, graintune-operator
// records the trial, and JobSet's restart runs the recommendation.
#pragma once

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/pod_runner.h"

namespace graintune::testing::demo {

// The namespace the story runs in; the stand-in kubelet runs only its pods (one at a time).
inline constexpr char kMaxTextDemoNamespace[] = "maxtext-demo";

// Steps 3 on, once the control plane with a MaxTextHost node, graintune and `runner` (started,
// with MaxTextTrainer) are up. The exit code: 0 when the restart ran the recommendation and its
// trial was recorded, 1 when a step did not happen, 130 when interrupted.
int TellMaxTextStory(ControlPlane& cp, PodRunner& runner, const MaxTextEnv& maxtext);

}  // namespace graintune::testing::demo
