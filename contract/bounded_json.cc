#include "contract/bounded_json.h"

#include <cmath>

namespace graintune::contract {

using nlohmann::json;

double BoundedField(const json& object, const char* field, double absent, double lo, double hi,
                    std::string& problem) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return absent;
  if (!it->is_number()) {
    problem = std::string(field) + " is not a number";
    return absent;
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    problem = std::string(field) + " " + it->dump() + " is outside [" + json(lo).dump() + ", " +
              json(hi).dump() + "]";
    return absent;
  }
  return v;
}

}  // namespace graintune::contract
