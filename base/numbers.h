// Numbers written as text by users and by other programs (flags, annotations, labels, metrics
// lines), parsed strictly: the whole text or nothing, never an exception.
#pragma once

#include <optional>
#include <string_view>

namespace graintune {

// A finite decimal number ("4.3", "1e3", "-2"); nullopt for empty text, trailing characters,
// inf or nan.
std::optional<double> ParseFiniteNumber(std::string_view text);

// A whole int ("42", "-1"); nullopt for anything else, including out of range.
std::optional<int> ParseInt(std::string_view text);

}  // namespace graintune
