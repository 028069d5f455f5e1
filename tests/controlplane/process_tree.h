// This machine's processes as /proc shows them, for tests and demos that run real trainers
// through the stand-in kubelet (pod_runner.h): the live processes below a pod's container
// process, and among them the Grain worker processes a Python trainer started. Reads /proc
// each call; a process that ends while being read is simply absent.
#pragma once

#include <map>
#include <string>

namespace graintune::testing {

struct ProcessSeen {
  int ppid = 0;
  std::string cmdline;  // arguments joined by spaces
};

// The live (not zombie) processes below `pid`, by pid.
std::map<int, ProcessSeen> Descendants(int pid);

// The trainer in `tree`: the first (lowest pid) process whose command line holds
// `trainer_pattern` and that is not a shell; 0 when there is none.
int TrainerIn(const std::map<int, ProcessSeen>& tree, const std::string& trainer_pattern);

// Grain's worker processes in `tree` (Descendants of a container's shell): everything the
// first process whose command line holds `trainer_pattern` (and is not a shell) started,
// except multiprocessing's helpers (its resource tracker and forkserver), as graintune-exporter
// counts them. -1 when no trainer is in the tree.
int GrainWorkers(const std::map<int, ProcessSeen>& tree, const std::string& trainer_pattern);

// Whether `pid` has exited (gone, or a zombie not yet reaped).
bool ProcessEnded(int pid);

}  // namespace graintune::testing
