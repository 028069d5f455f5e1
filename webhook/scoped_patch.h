// ScopedPatch: the RFC 6902 patch between an object and its mutated copy, computed only over the
// subtrees the planner touched.
//
// nlohmann_json's diff walks the whole object; an admission request's object is mostly fields
// graintune never touches (the pod spec beyond one container, status, managedFields). The
// planner records the JSON pointers it wrote under; this diffs just those subtrees and yields
// exactly the operations, in exactly the order, that diff(before, after) yields, provided
// nothing outside the touched subtrees differs (the planner's contract).
//
// Each touched pointer is first widened to the nearest ancestor present in both objects, or to
// the outermost member only `after` has under an object both have (a missing metadata map the
// planner created: one "add" of its whole value, as diff writes it); pointers inside another
// are dropped; the rest are visited in diff's order (object keys as std::map orders them, members
// both have before members only `after` has, array indices numerically).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace graintune::webhook {

// The pointers whose diffs together make the patch (widened, deduplicated, ordered). A pointer
// absent from `before` stands for an "add" of its value in `after`.
std::vector<nlohmann::json::json_pointer> CoveringPointers(const nlohmann::json& before,
                                                           const nlohmann::json& after,
                                                           const std::vector<std::string>& touched);

// The patch from `before` to `after`, given the subtrees that may differ.
nlohmann::json ScopedPatch(const nlohmann::json& before, const nlohmann::json& after,
                           const std::vector<std::string>& touched);

}  // namespace graintune::webhook
