// MaxText's override words as the stand-in trainers read them: `key=value` on the command line
// (the last one wins, as in MaxText), else the `M_KEY` environment variable. Only what the
// stand-ins need: no config files, no type checks beyond the caller's.
#pragma once

#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace graintune::testing {

inline std::optional<std::string> MaxTextValue(const std::vector<std::string>& words, const std::string& key) {
  std::optional<std::string> found;
  const std::string prefix = key + "=";
  for (const std::string& word : words)
    if (word.rfind(prefix, 0) == 0) found = word.substr(prefix.size());
  if (found) return found;
  std::string env = "M_";
  for (char c : key) env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* value = std::getenv(env.c_str())) return std::string(value);
  return std::nullopt;
}

}  // namespace graintune::testing
