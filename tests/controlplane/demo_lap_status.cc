#include "tests/controlplane/demo_lap_status.h"

#include "tests/controlplane/demo_output.h"

namespace graintune::testing::demo {
namespace {

std::string Figure(const kube::Json& lap, const char* key, int places, const std::string& unit) {
  return lap.contains(key) && lap[key].is_number() ? Fixed(lap[key].get<double>(), places) + unit : "-";
}

}  // namespace

void SayLapStatus(const std::string& ns, const std::string& name, const kube::Json& lap) {
  const int hosts = lap.value("hosts", 0);
  Say("   $ kubectl get graintuning -n " + ns + " " + name + " -o jsonpath={.status.lap}");
  Say("     the lap ran " + Figure(lap, "wallSeconds", 1, " s") + " with " +
      std::to_string(lap.value("admissionWorkers", 0)) + " workers (admission's value) on " +
      std::to_string(hosts) + (hosts == 1 ? " host" : " hosts") + ": a step of " +
      Figure(lap, "stepSeconds", 3, " s") + ", the workers busy " + Figure(lap, "workerBusyFraction", 3, "") +
      " of the time, " +
      (lap.contains("workerMemoryBytes") ? Fixed(lap.value("workerMemoryBytes", 0.0) / 1e6, 0) + " MB"
                                         : std::string("-")) +
      " per worker at most");
  Say("     answer: " + lap.value("answer", std::string("-")));
}

}  // namespace graintune::testing::demo
