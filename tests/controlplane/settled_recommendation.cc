#include "tests/controlplane/settled_recommendation.h"

#include <string>

namespace graintune::testing {

using kube::Json;

bool SettledRecommendation::Settled(const Json& status) {
  const std::string trial = "/trials/" + std::to_string(attempt_ - 1) + "/samples";
  const int samples = status.value(Json::json_pointer(trial), 0);
  const auto now = std::chrono::steady_clock::now();
  if (samples != last_samples_) {
    last_samples_ = samples;
    stable_since_ = now;
  }
  const Json rec = status.value("recommendation", Json::object());
  workers_ = rec.value("workers", 0);
  return samples > 0 && rec.value("attempt", 0) == attempt_ && workers_ >= 1 &&
         now - stable_since_ >= std::chrono::seconds(3);
}

}  // namespace graintune::testing
