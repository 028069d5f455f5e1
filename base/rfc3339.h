// RFC 3339 timestamps as Kubernetes writes them (UTC, "Z"): the one place graintune formats and
// parses them. metav1.Time has whole seconds (2026-11-30T06:00:00Z), metav1.MicroTime six
// fraction digits (2026-11-30T05:24:14.487759Z).
//
// Errors: ParseRfc3339 answers nullopt for anything that is not such a timestamp (another zone,
// a missing part, trailing text); it never throws. Work is linear in the text's length.
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "base/clock.h"

namespace graintune {

// metav1.Time text of `t`: 2026-11-30T06:00:00Z (the fraction of a second is dropped).
std::string FormatRfc3339(Clock::WallTime t);
// metav1.MicroTime text of `t`: 2026-11-30T05:24:14.487759Z.
std::string FormatRfc3339Micros(Clock::WallTime t);

// Seconds since the epoch of an RFC 3339 UTC time ("2026-11-30T06:00:00Z", any fraction of a
// second allowed and dropped); nullopt when `text` is not one.
std::optional<std::time_t> ParseRfc3339(const std::string& text);

}  // namespace graintune
