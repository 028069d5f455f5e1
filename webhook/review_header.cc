#include "webhook/review_header.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

// SAX events in, the header's fields out; returns false (stops the parser) once all are seen.
class HeaderReader {
 public:
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool string(json::string_t& s) {
    if (At({"apiVersion"})) header_.api_version = s, seen_api_version_ = true;
    else if (At({"kind"})) header_.kind = s, seen_kind_ = true;
    else if (At({"request", "uid"})) header_.uid = s;
    else if (At({"request", "kind", "group"})) header_.request_group = s;
    else if (At({"request", "kind", "kind"})) header_.request_kind = s;
    return true;
  }
  bool start_object(std::size_t) {
    frames_.push_back({false, ""});
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    if (At({"request", "kind"})) request_kind_done_ = true;
    return !Done();
  }
  bool start_array(std::size_t) {
    if (frames_.empty()) return false;  // the review must be an object
    frames_.push_back({true, ""});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

  bool Done() const {
    return seen_api_version_ && seen_kind_ && !header_.uid.empty() && request_kind_done_;
  }
  const ReviewHeader& header() const { return header_; }

 private:
  struct Frame {
    bool array;
    std::string key;  // the member being read, for an object
  };

  // True when the innermost objects are exactly `path`'s keys, outermost first.
  bool At(std::initializer_list<std::string_view> path) const {
    if (frames_.size() != path.size()) return false;
    size_t i = 0;
    for (std::string_view k : path) {
      if (frames_[i].array || frames_[i].key != k) return false;
      ++i;
    }
    return true;
  }

  std::vector<Frame> frames_;
  ReviewHeader header_;
  bool seen_api_version_ = false, seen_kind_ = false, request_kind_done_ = false;
};

}  // namespace

std::optional<ReviewHeader> ReadReviewHeader(std::string_view body) {
  HeaderReader reader;
  json::sax_parse(body.begin(), body.end(), &reader);
  if (!reader.Done()) return std::nullopt;
  return reader.header();
}

}  // namespace graintune::webhook
