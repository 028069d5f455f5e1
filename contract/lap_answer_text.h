// The practice lap's answer as text: what the operator writes in a pod's graintune.dev/lap-value
// annotation (and the webhook, for an attempt that continues its run), and what graintune-launcher
// reads from the downward-API file of that annotation. One spelling, formatted and parsed here:
//   "N"           the run's value, a whole number >= 1 (no sign, no leading zero);
//   "none: WHY"   no value from the lap: the launcher starts the trainer with admission's value;
//   ""            no answer yet (the annotation is absent, or the kubelet has not written it).
// Pure; linked by the static launcher as well as the servers (no graintune library beyond
// base/status.h).
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace graintune::contract {

struct LapAnswerText {
  bool decided = false;        // false: no answer yet
  std::optional<int> workers;  // decided: the run's value; nullopt: keep admission's
  std::string why;             // decided without a value: the reason
};

std::string FormatLapValue(int workers);                // "N"
std::string FormatNoLapValue(const std::string& why);   // "none: why"

// Trailing newlines and spaces are ignored. An error for anything else than the three forms:
// the launcher then keeps admission's value.
Result<LapAnswerText> ParseLapAnswerText(const std::string& text);

}  // namespace graintune::contract
