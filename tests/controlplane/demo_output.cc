#include "tests/controlplane/demo_output.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "tests/controlplane/wait_for.h"

namespace graintune::testing::demo {
namespace {

std::atomic<bool> g_interrupted{false};
void OnSignal(int) { g_interrupted = true; }

}  // namespace

void StopOnSignals() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

bool Interrupted() { return g_interrupted; }

void Say(const std::string& text) {
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void Step(const std::string& title) { Say("\n== " + title); }

std::string Indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}



bool WaitFor(const std::function<bool()>& done, int seconds) {
  return graintune::testing::WaitFor(done, std::chrono::seconds(seconds), &g_interrupted);
}

int Stop(const std::string& what) {
  Say(g_interrupted ? "\nInterrupted: stopping everything." : "\n" + what + ": stopping everything.");
  return g_interrupted ? 130 : 1;
}

std::string Fixed(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

}  // namespace graintune::testing::demo
