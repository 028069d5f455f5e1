#include "tuner/learning.h"

#include <algorithm>

#include "tuner/decision.h"

namespace graintune {

LearnedFigures LearnFromTrials(const std::vector<Trial>& trials) {
  LearnedFigures learned;
  const Trial* starved = nullptr;
  const Trial* busy_read = nullptr;
  for (const Trial& t : trials) {
    if (t.oom_killed || t.workers <= 0) continue;
    if (t.worker_memory_bytes > 0)
      learned.worker_memory_bytes = std::max(learned.worker_memory_bytes.value_or(0), t.worker_memory_bytes);
    if (t.samples < kMinSteadySamples || t.tokens_per_second_per_host <= 0) continue;
    if (IsSaturated(t)) {
      if (!starved || t.attempt > starved->attempt) starved = &t;
    } else {
      learned.fed_tokens_per_second_per_host =
          std::max(learned.fed_tokens_per_second_per_host.value_or(0), t.tokens_per_second_per_host);
      if (t.worker_busy_fraction > 0 && (!busy_read || t.attempt > busy_read->attempt)) busy_read = &t;
    }
  }
  if (starved) {
    learned.tokens_per_second_per_worker = starved->tokens_per_second_per_host / starved->workers;
    learned.rate_basis = "starved attempt " + std::to_string(starved->attempt);
  } else if (busy_read) {
    learned.tokens_per_second_per_worker = RateOf(*busy_read, kRunBusyShareMargin);
    learned.rate_basis = "busy share of attempt " + std::to_string(busy_read->attempt);
  }
  return learned;
}

}  // namespace graintune
