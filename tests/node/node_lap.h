// The practice lap of the tiny MaxText JobSet on the real node, as the node test and the
// real-node demo run it: a namespace whose policy asks for a training lap, the pod's MaxText
// trainer told apart from its lap (graintune-launcher runs the lap under its own run_name), and
// the operator's answer read off the pod.
#pragma once

#include <optional>
#include <string>

#include "kube/client.h"
#include "tuner/practice_lap.h"

namespace graintune::testing {

// The lap's own run name (graintune-launcher's): its MaxText start says so on its command line.
// (Not enable_checkpointing=false: the tiny model's arguments carry it, before the run's =true.)
inline constexpr char kLapRunNameWord[] = "run_name=graintune-practice-lap";

// The steps of the lap LapPolicy asks for: the fewest a lap runs (tuner/practice_lap.h).
inline constexpr int kNodeLapSteps = kMinLapSteps;

// `ns`'s GrainTunePolicy: at most `max_workers` (this machine's cores) and a training lap of
// kNodeLapSteps steps, stopped after 400 s, its answer awaited 120 s.
std::string LapPolicy(const std::string& ns, int max_workers);

// The pod's MaxText trainer (not its lap): the `bash` process of the pod whose command line
// starts MaxText without the lap's run name; 0 while there is none.
int TrainerShellAfterLap(const std::string& pod_uid);

// Seconds from the lap's end (`lap_metrics_file`, where the lap's MaxText writes a line per step,
// last written by its last step; the launcher's result file is written again at the trainer's
// start) to the start of process `trainer` (MaxText, which the trainer's shell starts once the
// launcher had the run's value and exec'd that shell in its own process): what the answer took
// to reach the pod, of the launcher's answer wait. nullopt when either is unknown.
std::optional<double> LapEndToTrainerSeconds(const std::string& lap_metrics_file, int trainer);

// The pod's annotation `key` ("" when absent).
std::string PodAnnotation(const kube::Json& pod, const std::string& key);

}  // namespace graintune::testing
