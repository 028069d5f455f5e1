// Which attempt of which run an object is (tuner/attempt_value.h's AttemptQuery), as far as the
// object, its Job's failed pods and the tuning key's history say. Reads through the sources it is
// given; decides nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/attempt_value.h"
#include "webhook/planner_sites.h"
#include "workload/sources.h"

namespace graintune::webhook::planner {

// Which attempt of which run the object is, as far as the object itself says: its attempt
// annotation or restart label, whether it only holds values graintune applied, and whether
// the run keeps its value (the trainer's resume decision).
AttemptQuery QueryFor(const json& object_meta, const std::map<std::string, std::string>& labels,
                      WorkloadKind kind, const std::vector<TemplateSites>& found,
                      const TemplateSites& primary, const ContainerSites& trainer);

// A plain Job's pod created after some of its pods failed is a retry: the next attempt(s).
// A reinvocation sees the attempt this pod was given, failures included: they are taken out
// first, so they count once. Returns the failed pods counted into `query.attempt`.
int CountJobRetries(const json& object_meta, const std::map<std::string, std::string>& labels,
                    const std::string& ns, workload::JobStatusSource& jobs, AttemptQuery& query);

// The tuning key's history, with the run `query` resumes when another workload recorded it;
// nullopt (and a warning) when the source failed.
std::optional<TuningHistory> HistoryOf(workload::HistorySource& source, const std::string& ns,
                                       const std::string& tuning_key, const AttemptQuery& query,
                                       std::vector<std::string>& warnings);

}  // namespace graintune::webhook::planner
