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

nlohmann::json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = ToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
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
      if (!node.IsNull()) docs.push_back(ToJson(node));
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string("YAML: ") + e.what());
  }
}

}  // namespace graintune::workload
