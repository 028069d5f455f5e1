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

}  // namespace graintune::webhook
