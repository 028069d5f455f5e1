// admission_cost REVIEW.json N: runs graintune's Admitter (standalone sources, exporter off, as
// the throughput benchmark serves it) N times on one AdmissionReview and prints the response
// size. Under `valgrind --tool=callgrind` the instruction count of two runs (N and 2N) gives the
// cost of one admission without the server, TLS or load generator: a figure that does not
// drift with the machine's load (scripts/bench-webhook.sh prints it).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "webhook/admission.h"
#include "workload/in_memory_sources.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: admission_cost REVIEW.json N\n";
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::cerr << "admission_cost: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  const std::string body = text.str();
  using namespace graintune;
  using namespace graintune::webhook;
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  workload::InMemoryConfigMaps configmaps;
  workload::FixedPolicy policies;
  const Admitter admitter(PlannerSources{shapes, history, configmaps, policies});
  size_t bytes = 0;
  const int n = std::stoi(argv[2]);
  for (int i = 0; i < n; ++i) bytes += admitter.Admit(body).body.size();
  std::cout << bytes << "\n";
  return 0;
}
