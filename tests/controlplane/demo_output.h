// How the demos tell their story (scripts/demo.sh, with and without --real-node): numbered
// steps, command output indented under them, waits that end early on Ctrl-C or SIGTERM, and the
// exit code when a step did not happen (1) or the demo was interrupted (130).
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "tests/controlplane/result_text.h"

namespace graintune::testing::demo {

// Installs the SIGINT and SIGTERM handlers that Interrupted() reports.
void StopOnSignals();
bool Interrupted();

void Say(const std::string& text);          // a line, flushed at once
void Step(const std::string& title);        // "\n== title"
// `text` with every line prefixed by `pad`, trailing blank lines dropped.
std::string Indent(const std::string& text, const std::string& pad = "   ");
// `v` with `decimals` places ("0.854").
std::string Fixed(double v, int decimals);
// Polls `done` until it holds (true), `seconds` pass or the demo is interrupted (false).
bool WaitFor(const std::function<bool()>& done, int seconds);
// Says why the demo stops early (`what` did not happen, or the interruption); its exit code.
int Stop(const std::string& what);

}  // namespace graintune::testing::demo
