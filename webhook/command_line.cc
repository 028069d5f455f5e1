#include "webhook/command_line.h"

#include <charconv>
#include <cstdlib>
#include <iostream>

namespace graintune::webhook {

int IntFlagOrExit(const std::string& program, const std::string& flag, const std::string& text,
                  int lo, int hi) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < lo || value > hi) {
    std::cerr << program << ": " << flag << " wants an integer in [" << lo << ", " << hi
              << "], got '" << text << "'\n";
    std::exit(2);
  }
  return value;
}

std::optional<std::chrono::seconds> ParseDuration(const std::string& text) {
  if (text == "0") return std::chrono::seconds(0);
  if (text.size() < 2) return std::nullopt;
  long long n = 0;
  const char* last = text.data() + text.size() - 1;
  auto [ptr, ec] = std::from_chars(text.data(), last, n);
  if (ec != std::errc() || ptr != last || n < 0) return std::nullopt;
  long long unit = 0;
  switch (*last) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    default: return std::nullopt;
  }
  if (n > (1LL << 40) / unit) return std::nullopt;  // far past any sensible setting
  return std::chrono::seconds(n * unit);
}

std::chrono::seconds DurationFlagOrExit(const std::string& program, const std::string& flag,
                                        const std::string& text) {
  std::optional<std::chrono::seconds> d = ParseDuration(text);
  if (!d) {
    std::cerr << program << ": " << flag << " wants a duration such as 45s, 30m, 720h or 30d, got '"
              << text << "'\n";
    std::exit(2);
  }
  return *d;
}

}  // namespace graintune::webhook
