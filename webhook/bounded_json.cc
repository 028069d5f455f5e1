#include "webhook/bounded_json.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

// Forwards every SAX event to nlohmann_json's DOM builder, refusing (and so ending the parse
// at) the first container past max_depth or the first value past max_values.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(json& out, int max_depth, size_t max_values)
      : dom_(out, /*allow_exceptions=*/false), max_depth_(max_depth), max_values_(max_values) {}

  bool null() { return Count() && dom_.null(); }
  bool boolean(bool v) { return Count() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return Count() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Count() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return Count() && dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return Count() && dom_.string(v); }
  bool binary(json::binary_t& v) { return Count() && dom_.binary(v); }
  bool key(json::string_t& k) { return dom_.key(k); }
  bool start_object(std::size_t n) { return Open() && dom_.start_object(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Open() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);
  }

  bool too_deep() const { return too_deep_; }
  bool too_many() const { return too_many_; }
  bool errored() const { return dom_.is_errored(); }

 private:
  bool Count() {
    if (++values_ > max_values_) too_many_ = true;
    return !too_many_;
  }
  bool Open() {
    if (++depth_ > max_depth_) too_deep_ = true;
    return !too_deep_ && Count();
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const int max_depth_;
  const size_t max_values_;
  int depth_ = 0;
  size_t values_ = 0;
  bool too_deep_ = false, too_many_ = false;
};

}  // namespace

BoundedJson ParseBoundedJson(std::string_view text, int max_depth, size_t max_values) {
  BoundedJson out;
  BoundedDomBuilder builder(out.value, max_depth, max_values);
  const bool ok = json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true);
  if (builder.too_deep()) out.verdict = BoundedJson::Verdict::kTooDeep;
  else if (builder.too_many()) out.verdict = BoundedJson::Verdict::kTooManyValues;
  else if (ok && !builder.errored()) out.verdict = BoundedJson::Verdict::kOk;
  if (out.verdict != BoundedJson::Verdict::kOk) out.value = json(json::value_t::discarded);
  return out;
}

}  // namespace graintune::webhook
