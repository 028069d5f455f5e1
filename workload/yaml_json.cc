#include "workload/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <sstream>

namespace graintune::workload {
namespace {

// Digits from `i`; returns how many.
size_t Digits(const std::string& s, size_t& i) {
  const size_t from = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i - from;
}

// YAML 1.2 core schema numbers, checked by hand in one pass (std::regex recursed once per
// character: a 40,000-digit scalar overflowed the stack).
//   int   [-+]?[0-9]+
//   float [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsInt(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  return Digits(s, i) > 0 && i == s.size();
}
bool IsFloat(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  const size_t whole = Digits(s, i);
  size_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    fraction = Digits(s, i);
  }
  if (whole == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (Digits(s, i) == 0) return false;
  }
  return i == s.size();
}

nlohmann::json PlainScalar(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  const char* begin = s.data() + (!s.empty() && s[0] == '+');
  if (IsInt(s)) {
    long long v = 0;
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc()) return v;
  }
  if (IsFloat(s)) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    // Out of double's range (1e999): kept as the text, as JSON has no infinity.
  }
  return s;
}

// Counts a stream's documents and events without building nodes. yaml-cpp's LoadAll loops
// forever on some inputs (six bytes, "! x\n? ", yield an endless run of documents in 0.7.0);
// this pass stops at a limit first, so LoadAll only sees streams that end.
class StreamCensus : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {
    Count();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count();
  }
  void OnMapEnd() override {}

 private:
  void Count();
  size_t events_ = 0;
};

// What one document may cost once its aliases are expanded: a 427-byte "billion laughs" file
// names billions of nodes through aliases, which the conversion to JSON would copy out.
constexpr size_t kMaxNodes = 200'000;
constexpr int kMaxDepth = 512;

constexpr size_t kMaxDocuments = 10'000;

struct Budget {
  size_t nodes = 0;
};

void StreamCensus::Count() {
  if (++events_ > kMaxNodes)
    throw YAML::Exception(YAML::Mark::null_mark(), "more than " + std::to_string(kMaxNodes) + " nodes");
}

// Throws a YAML::Exception when the stream holds more than kMaxDocuments documents or
// kMaxNodes nodes before any alias is expanded.
void CheckStream(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  StreamCensus census;
  for (size_t documents = 0; parser.HandleNextDocument(census);)
    if (++documents > kMaxDocuments)
      throw YAML::Exception(YAML::Mark::null_mark(),
                            "more than " + std::to_string(kMaxDocuments) + " documents");
}

nlohmann::json ToJson(const YAML::Node& node, Budget& budget, int depth) {
  if (++budget.nodes > kMaxNodes)
    throw YAML::Exception(YAML::Mark::null_mark(),
                          "more than " + std::to_string(kMaxNodes) +
                              " nodes once aliases are expanded");
  if (depth > kMaxDepth)
    throw YAML::Exception(YAML::Mark::null_mark(),
                          "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node)
        out[entry.first.as<std::string>()] = ToJson(entry.second, budget, depth + 1);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(ToJson(item, budget, depth + 1));
      return out;
    }
    case YAML::NodeType::Scalar:
      return node.Tag() == "!" ? nlohmann::json(node.Scalar()) : PlainScalar(node.Scalar());
    default:
      return nullptr;
  }
}

}  // namespace

Result<std::vector<nlohmann::json>> ParseYamlDocuments(const std::string& text) {
  try {
    CheckStream(text);
    std::vector<nlohmann::json> docs;
    for (const YAML::Node& node : YAML::LoadAll(text)) {
      Budget budget;
      if (!node.IsNull()) docs.push_back(ToJson(node, budget, 0));
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string("YAML: ") + e.what());
  } catch (const std::exception& e) {  // e.g. bad_alloc: an answer, not the end of the program
    return Status::Error(std::string("YAML: cannot read: ") + e.what());
  }
}

}  // namespace graintune::workload
