// ScopedPatch: the RFC 6902 patch between an object and its mutated copy, computed only over the
// subtrees the planner touched.
//
// nlohmann_json's diff walks the whole object; an admission request's object is mostly fields
// graintune never touches (the pod spec beyond one container, status, managedFields). The
// planner records the JSON pointers it wrote under; this diffs just those subtrees and yields
// exactly the operations, in exactly the order, that diff(before, after) yields, provided
// nothing outside the touched subtrees differs (the planner's contract).
//
// A touched pointer present in both objects is diffed where it is (a changed type there is one
// "replace", as diff writes it); one absent from both changed nothing and is skipped; one only
// `after` has is widened to the outermost member only `after` has under an object both have (a
// missing metadata map the planner created: one "add" of its whole value). Pointers inside
// another are dropped; the rest are visited in diff's order (object keys as std::map orders
// them, members both have before members only `after` has, array indices numerically).
//
// `before` need not be the whole object: CopyTouched gives the part of it these functions read,
// so the mutating path copies the subtrees it changes, never the object.
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

// The part of `before` that CoveringPointers and ScopedPatch read for `touched`: each touched
// subtree copied whole, under the shape of its ancestors (objects with just that member, arrays
// padded with nulls up to the index). A touched pointer `before` lacks needs only its ancestors'
// shape, unless the nearest one present is not an object (a scalar or an array): that one is
// copied whole. ScopedPatch(CopyTouched(before, t), after, t) == ScopedPatch(before, after, t)
// whenever nothing outside the touched subtrees differs and nothing touched is removed.
nlohmann::json CopyTouched(const nlohmann::json& before, const std::vector<std::string>& touched);

}  // namespace graintune::webhook
