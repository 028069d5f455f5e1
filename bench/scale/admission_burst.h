// Admission latency added by graintune as the API server's clients see it: the pods of one
// slice (a JobSet child Job's pod template, as graintune rewrote it) created at once, over
// `concurrency` connections, in turn in a namespace graintune's webhook configuration selects, in
// one it excludes (the API server then calls no webhook) and, when noop_ns is set, in one only a
// webhook that does nothing selects (NoopWebhook: what any webhook call costs here), in
// interleaved rounds of the same run (each round starts with the next arm). Each pod's POST is timed; the pods are never scheduled (a scheduler name nobody
// serves) and are deleted after each burst.
//
// Errors as values. Runs on the calling thread plus `concurrency` threads of its own.
#pragma once

#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::bench {

struct BurstOptions {
  kube::Json pod_template;      // a Job's spec.template
  std::string hooked_ns, plain_ns;
  std::string noop_ns;  // empty: no third arm
  int pods = 256;
  int rounds = 3;
  int concurrency = 16;
};

struct BurstLatencies {
  std::vector<double> hooked_ms, plain_ms, noop_ms;  // every POST of every round
};

Result<BurstLatencies> MeasureAdmissionBursts(testing::ControlPlane& cp, const BurstOptions& options);

}  // namespace graintune::bench
