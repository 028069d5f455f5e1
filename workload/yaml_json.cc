#include "workload/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>

namespace graintune::workload {
namespace {

nlohmann::json PlainScalar(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, kInt)) {
    long long v = 0;
    auto [ptr, ec] = std::from_chars(s.data() + (s[0] == '+'), s.data() + s.size(), v);
    if (ec == std::errc()) return v;
  }
  if (std::regex_match(s, kFloat)) return std::stod(s);
  return s;
}

// What one document may cost once its aliases are expanded: a 427-byte "billion laughs" file
// names billions of nodes through aliases, which the conversion to JSON would copy out.
constexpr size_t kMaxNodes = 200'000;
constexpr int kMaxDepth = 512;

struct Budget {
  size_t nodes = 0;
};

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
    std::vector<nlohmann::json> docs;
    for (const YAML::Node& node : YAML::LoadAll(text)) {
      Budget budget;
      if (!node.IsNull()) docs.push_back(ToJson(node, budget, 0));
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string("YAML: ") + e.what());
  }
}

}  // namespace graintune::workload
