// Multi-document YAML manifests as nlohmann::json values (yaml-cpp underneath).
//
// Plain scalars become booleans, integers, floats or null when they read as such (YAML 1.2
// core schema); quoted scalars always stay strings, so "4" and 4 keep their meaning.
// Errors carry yaml-cpp's message with line and column; empty documents are skipped. Bounded:
// a document that expands (through aliases) to more than 200,000 nodes, or nests deeper than
// 512 levels, is an error, never a long stall or an exhausted heap.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace graintune::workload {

Result<std::vector<nlohmann::json>> ParseYamlDocuments(const std::string& text);

}  // namespace graintune::workload
