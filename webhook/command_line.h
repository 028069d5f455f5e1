// Command-line helpers shared by graintune's server binaries (graintune-webhook,
// graintune-operator, graintune-exporter). A malformed flag is a usage error: a message naming
// the program and the flag, and exit status 2; never an uncaught exception.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace graintune::webhook {

// A duration written as a whole number and one unit: "45s", "30m", "720h", "30d"; "0" is zero.
// nullopt for anything else (no unit, fractions, negative, overflow).
std::optional<std::chrono::seconds> ParseDuration(const std::string& text);

// A duration flag value (ParseDuration), or exit(2) after saying what was wrong.
std::chrono::seconds DurationFlagOrExit(const std::string& program, const std::string& flag,
                                        const std::string& text);

// An integer flag value in [lo, hi], or exit(2) after saying what was wrong.
int IntFlagOrExit(const std::string& program, const std::string& flag, const std::string& text,
                  int lo, int hi);

}  // namespace graintune::webhook
