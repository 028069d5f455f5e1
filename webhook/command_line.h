// Command-line helpers shared by graintune's server binaries (graintune-webhook,
// graintune-operator, graintune-exporter). A malformed flag is a usage error: a message naming
// the program and the flag, and exit status 2; never an uncaught exception.
#pragma once

#include <string>

namespace graintune::webhook {

// An integer flag value in [lo, hi], or exit(2) after saying what was wrong.
int IntFlagOrExit(const std::string& program, const std::string& flag, const std::string& text,
                  int lo, int hi);

}  // namespace graintune::webhook
