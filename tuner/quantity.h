// Parsing of Kubernetes resource quantities ("180", "500m", "2Gi", "720G", "1.5e3").
//
// Used for node allocatable figures, container limits and graintune.dev/ annotations. The
// grammar is the one of k8s.io/apimachinery's resource.Quantity: a signed decimal number with
// an optional binary suffix (Ki Mi Gi Ti Pi Ei), decimal suffix (n u m k M G T P E) or decimal
// exponent (e3, E6). Errors name the input and what is wrong; nothing throws.
#pragma once

#include <optional>
#include <string_view>

#include "base/numbers.h"
#include "base/status.h"

namespace graintune {


// The quantity's value as a double ("500m" -> 0.5, "2Gi" -> 2147483648).
Result<double> ParseQuantity(std::string_view text);

// As ParseQuantity, and the value must be >= 0 and finite. `what` names the field in errors.
Result<double> ParseNonNegativeQuantity(std::string_view text, std::string_view what);

}  // namespace graintune
