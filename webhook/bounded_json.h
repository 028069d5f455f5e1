// ParseBoundedJson: a JSON document parsed into nlohmann_json's DOM in one linear pass, with
// its nesting depth and its number of values bounded while it is read.
//
// Why not json::parse with a parser callback: nlohmann_json's callback parser scans the parent
// container for a discarded element every time an object or array ends, so a body of n
// sibling objects costs O(n^2) even when the callback keeps everything (3 MB of "{}," took 58 s).
// This feeds the SAX events to nlohmann_json's own DOM builder instead, counting as they pass,
// and stops reading at the first value past a limit: nothing deeper or further is built.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace graintune::webhook {

struct BoundedJson {
  enum class Verdict { kOk, kMalformed, kTooDeep, kTooManyValues };
  Verdict verdict = Verdict::kMalformed;
  nlohmann::json value;  // the document when kOk, else discarded
};

// `max_depth`: objects and arrays nested inside one another (the document itself is depth 1);
// `max_values`: every value counted, containers included.
BoundedJson ParseBoundedJson(std::string_view text, int max_depth, size_t max_values);

}  // namespace graintune::webhook
