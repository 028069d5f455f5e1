// One bounded number field of a JSON object that came from a pod its owner controls (the
// exporter's answer, the launcher's result file): every number must be finite and within the
// bounds its reader names. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace graintune::contract {

// A number field: absent or null -> `absent`; present, a finite number within [lo, hi], else
// `problem` says which field and why (and `absent` is returned).
double BoundedField(const nlohmann::json& object, const char* field, double absent, double lo,
                    double hi, std::string& problem);

}  // namespace graintune::contract
