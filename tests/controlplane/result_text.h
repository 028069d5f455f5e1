// A command's output or its error, for a test's failure message or the demo's log: kubectl and
// helm calls return Result<std::string>, and what went wrong is worth printing either way.
#pragma once

#include <string>

#include "base/status.h"

namespace graintune::testing {

inline std::string Text(const Result<std::string>& r) { return r.ok() ? *r : r.error(); }

}  // namespace graintune::testing
