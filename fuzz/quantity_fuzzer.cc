// libFuzzer target: Kubernetes quantities (tuner/quantity.h), read from node allocatable,
// container limits and graintune.dev/ annotations of any object under admission.
//
// Checked beyond crashes (a violation traps):
//   - a success is finite; ParseNonNegativeQuantity succeeds exactly when ParseQuantity does
//     with a value >= 0, and gives the same value;
//   - a plain decimal ([+-]digits[.digits], spaces around it) that strtod reads in range is a
//     success with strtod's value: Kubernetes accepts every such number, so graintune must too.
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tuner/quantity.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// [+-]? digits with at most one '.', at least one digit, nothing else once spaces are trimmed.
bool IsPlainDecimal(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  bool digit = false, dot = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digit;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const graintune::Result<double> value = graintune::ParseQuantity(text);
  const graintune::Result<double> non_negative = graintune::ParseNonNegativeQuantity(text, "fuzz");
  if (value.ok()) Check(std::isfinite(*value));
  Check(non_negative.ok() == (value.ok() && *value >= 0));
  if (non_negative.ok()) Check(*non_negative == *value);

  if (IsPlainDecimal(text)) {
    const std::string copy(text);
    errno = 0;
    char* end = nullptr;
    const double expected = std::strtod(copy.c_str(), &end);
    if (errno == 0 && std::isfinite(expected)) {
      Check(value.ok());
      Check(*value == expected);
    }
  }
  return 0;
}
