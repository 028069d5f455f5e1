// How the demos tell a practice lap's outcome: the GrainTuning's status.lap (the operator's
// record of the lap: its wall time, admission's value, the hosts, the slowest host's step and
// busy share, the highest worker memory, and the answer) in a few lines.
#pragma once

#include <string>

#include "kube/client.h"

namespace graintune::testing::demo {

// Says what `lap` (status.lap of the GrainTuning `name` in `ns`) holds.
void SayLapStatus(const std::string& ns, const std::string& name, const kube::Json& lap);

}  // namespace graintune::testing::demo
