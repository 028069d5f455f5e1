// libFuzzer target: the YAML readers (workload/mounted_config.h FlattenYamlScalars for MaxText
// configs in ConfigMaps, workload/yaml_json.h ParseYamlDocuments for manifests and policy files).
//
// yaml-cpp is the system's library, built without coverage instrumentation: libFuzzer steers by
// graintune's side of the conversion only, and yaml-cpp's own crashes, hangs and memory blowups
// still surface (ASan, -timeout, -rss_limit_mb). Checked beyond crashes (a violation traps):
//   - a text over kMaxConfigBytes is an error for FlattenYamlScalars, never parsed;
//   - every document ParseYamlDocuments returns is within the header's bounds: at most 512
//     levels deep and 200,000 nodes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload/mounted_config.h"
#include "workload/yaml_json.h"

namespace {

using json = nlohmann::json;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Depth and node count of `root`, walked with an explicit stack.
std::pair<size_t, size_t> DepthAndNodes(const json& root) {
  std::vector<std::pair<const json*, size_t>> todo = {{&root, 1}};
  size_t depth = 0, nodes = 0;
  while (!todo.empty()) {
    auto [node, level] = todo.back();
    todo.pop_back();
    ++nodes;
    depth = std::max(depth, level);
    if (node->is_structured())
      for (const json& child : *node) todo.push_back({&child, level + 1});
  }
  return {depth, nodes};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const graintune::Result<graintune::workload::ConfigValues> values =
      graintune::workload::FlattenYamlScalars(text);
  if (size > graintune::workload::kMaxConfigBytes) Check(!values.ok());

  const graintune::Result<std::vector<json>> docs = graintune::workload::ParseYamlDocuments(text);
  if (docs.ok()) {
    for (const json& doc : *docs) {
      const auto [depth, nodes] = DepthAndNodes(doc);
      Check(depth <= 513 && nodes <= 200000);
    }
  }
  return 0;
}
