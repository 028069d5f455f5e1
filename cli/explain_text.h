// The report of `graintune explain` as a person reads it: per object its name, a headline for
// any outcome but "tuned", each -1 found and the value it gets (or why it is left), the host,
// the policy, what was learned, whether the run keeps its value, the reason, the lap, the start
// check, the warnings and the patch. Reads the report's JSON (explain's -o json, the one form
// both outputs come from); pure.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace graintune::cli {

void PrintExplainText(const nlohmann::json& report, std::ostream& out);

}  // namespace graintune::cli
