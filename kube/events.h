// Events (events.k8s.io/v1) about a workload, as `kubectl describe` and `kubectl events` show
// them: "RecommendationChanged 4 -> 9 workers: attempt 0 was data-bound ...". Recording an
// Event is best effort: a failure is returned for logging and never stops the caller.
#pragma once

#include <string>

#include "base/clock.h"
#include "kube/client.h"

namespace graintune::kube {

struct EventSpec {
  std::string type = "Normal";  // Normal | Warning
  std::string reason;           // UpperCamelCase, e.g. RecommendationChanged
  std::string action;           // what was done, e.g. Recommend
  std::string note;             // human text, at most 1 kB (longer is cut)
};

class EventRecorder {
 public:
  // `clock` gives each Event its eventTime.
  EventRecorder(std::shared_ptr<Client> client, std::string controller, std::string instance,
                const Clock& clock = RealClock());
  // `regarding` is the object the event is about (needs apiVersion, kind, metadata).
  Status Record(const Json& regarding, const EventSpec& event);

 private:
  std::shared_ptr<Client> client_;
  std::string controller_;
  std::string instance_;
  const Clock& clock_;
};

}  // namespace graintune::kube
