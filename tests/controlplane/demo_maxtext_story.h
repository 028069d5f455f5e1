// `scripts/demo.sh --trainer maxtext [--real-node]`: the demo's story with MaxText's own trainer
// instead of the emulator. A one-host JobSet trains a tiny model in maxtext 0.2.5 on this
// machine's CPU, on a pipeline where tokenizing 512 KiB records binds, with
// grain_worker_count=-1; the pod (on the stand-in kubelet's TPU host shaped like this machine, or
// in a container on the real node) runs the command graintune rewrote through bash, MaxText
// starts that many Grain worker processes and writes its own metrics file, graintune-exporter
// follows it, graintune-operator records the trial. The run checkpoints (with Grain's iterator)
// to a folder that outlives its pods: the attempt fails, JobSet's restart keeps the run's value
// and resumes from the checkpoint, and the workload's next run (a new run_name under the same
// tuning key) starts with the value the first run measured.
#pragma once

#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/maxtext_pods.h"

namespace graintune::testing::demo {

// The namespace the story runs in; the stand-in kubelet runs only its pods (one at a time).
inline constexpr char kMaxTextDemoNamespace[] = "maxtext-demo";

// Steps 3 on, once the control plane, graintune and the node `pods` run on are up. MaxText is
// asked for `steps` steps: kTinySteps to let it end by itself, more to have it stopped once it
// wrote kTinySteps. The exit code: 0 when the restart kept the run's value and the next run got
// status.nextRun, 1 when a step did not happen, 130 when interrupted.
int TellMaxTextStory(ControlPlane& cp, const MaxTextPods& pods, const MaxTextEnv& maxtext,
                     int steps = kTinySteps);

}  // namespace graintune::testing::demo
