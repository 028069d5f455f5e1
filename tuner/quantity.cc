#include "tuner/quantity.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace graintune {
namespace {

struct Suffix {
  std::string_view text;
  double multiplier;
};

// Longest suffixes first so "Mi" wins over "M" and "m".
constexpr Suffix kSuffixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1024.0 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
    {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
    {"n", 1e-9},
    {"u", 1e-6},
    {"m", 1e-3},
    {"k", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
};

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

Result<double> ParseQuantity(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return Status::Error("quantity is empty");

  // Split into number and suffix: the number is sign, digits and one dot.
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  size_t digits = 0;
  bool dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
    if (s[i] == '.') {
      if (dot) return Status::Error("quantity " + Quote(text) + ": more than one '.'");
      dot = true;
    } else {
      ++digits;
    }
    ++i;
  }
  if (digits == 0) return Status::Error("quantity " + Quote(text) + ": no digits");
  std::string number(s.substr(0, i));
  if (number.front() == '+') number.erase(0, 1);
  std::string_view suffix = s.substr(i);

  double multiplier = 1.0;
  if (!suffix.empty()) {
    bool matched = false;
    // Decimal exponent: e3, E-2 (only when followed by digits; plain "E" is exa).
    if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
      int exponent = 0;
      auto [ptr, ec] =
          std::from_chars(suffix.data() + 1 + (suffix[1] == '+' ? 1 : 0),
                          suffix.data() + suffix.size(), exponent);
      if (ec == std::errc() && ptr == suffix.data() + suffix.size()) {
        multiplier = std::pow(10.0, exponent);
        matched = true;
      }
    }
    for (const Suffix& candidate : kSuffixes) {
      if (matched) break;
      if (suffix == candidate.text) {
        multiplier = candidate.multiplier;
        matched = true;
      }
    }
    if (!matched) {
      return Status::Error("quantity " + Quote(text) + ": unknown suffix " + Quote(suffix));
    }
  }

  double value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size()) {
    return Status::Error("quantity " + Quote(text) + ": not a number");
  }
  const double result = value * multiplier;
  if (!std::isfinite(result)) return Status::Error("quantity " + Quote(text) + ": out of range");
  return result;
}

Result<double> ParseNonNegativeQuantity(std::string_view text, std::string_view what) {
  Result<double> parsed = ParseQuantity(text);
  if (!parsed.ok()) return Status::Error(std::string(what) + ": " + parsed.error());
  if (*parsed < 0) {
    return Status::Error(std::string(what) + ": must not be negative, got " + Quote(text));
  }
  return parsed;
}

}  // namespace graintune
