// What graintune-webhook and graintune-operator export on /metrics, for the tests that hold the
// chart's PromQL (alerts, dashboard) against the binaries: both real binaries run against the
// test's control plane, the webhook answers one admission request of each outcome first (so
// its labelled series exist), and both expositions are read into one Exposition.
//
// Contract: ScrapeGraintuneBinaries starts both processes, waits (bounded) until the
// operator's exposition contains `operator_ready`, scrapes, and stops both before it returns.
// Errors name the step that failed; the operator's log is in the control plane's folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/controlplane/control_plane.h"

namespace graintune::testing {

// A Prometheus text exposition: the type of each family and the sample lines of each name.
struct Exposition {
  std::map<std::string, std::string> types;                  // family -> counter, gauge, ...
  std::map<std::string, std::vector<std::string>> samples;   // name -> the text between { }

  void Add(const std::string& text);
  // The family a sample name belongs to (x_bucket, x_sum, x_count of a histogram x: x); the
  // name itself otherwise.
  std::string FamilyOf(const std::string& name) const;
  bool HasFamily(const std::string& name) const { return types.count(FamilyOf(name)) > 0; }
  // Whether some sample of `name` (or, for a family name, of any of its sample names) carries
  // `label`.
  bool HasLabel(const std::string& name, const std::string& label) const;
};

struct GraintuneBinaries {
  std::string webhook;   // path of graintune-webhook
  std::string operator_; // path of graintune-operator
  std::string operator_ready = "graintune_operator_leader 1";
};

Result<Exposition> ScrapeGraintuneBinaries(ControlPlane& cp, const GraintuneBinaries& binaries);

}  // namespace graintune::testing
