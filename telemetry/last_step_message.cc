#include "telemetry/last_step_message.h"

#include <nlohmann/json.hpp>

namespace graintune::telemetry {

std::string LastStepMessage(long last_step) {
  return nlohmann::json{{"lastStep", last_step}}.dump() + "\n";
}

std::optional<long> ParseLastStepMessage(const std::string& message) {
  if (message.size() > kMaxTerminationMessageBytes) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto step = j.find("lastStep");
  if (step == j.end() || !step->is_number_integer()) return std::nullopt;
  const long v = step->get<long>();
  if (v < 0) return std::nullopt;
  return v;
}

}  // namespace graintune::telemetry
