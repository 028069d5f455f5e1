#include "webhook/scoped_patch.h"

#include <algorithm>

namespace graintune::webhook {

using json = nlohmann::json;

namespace {

// A pointer as tokens, with whether each token indexes an array (compared numerically) or names
// an object member (compared as std::map orders keys).
struct Path {
  std::vector<std::string> tokens;
  std::vector<bool> index;
  bool added = false;  // a member only `after` has: one "add" of its whole value
};

Path PathOf(const json& before, const json& after, const json::json_pointer& p) {
  Path path;
  for (json::json_pointer q = p; !q.empty(); q = q.parent_pointer()) path.tokens.push_back(q.back());
  std::reverse(path.tokens.begin(), path.tokens.end());
  path.added = !before.contains(p);
  const json* node = path.added ? &after : &before;
  for (const std::string& token : path.tokens) {
    path.index.push_back(node->is_array());
    node = node->is_array() ? &(*node)[std::stoul(token)] : &(*node)[token];
  }
  return path;
}

// diff's order: token by token, an ancestor before its descendants; within one object, members
// both sides have (in key order) before members only `after` has (in key order).
bool Before(const Path& a, const Path& b) {
  for (size_t i = 0; i < a.tokens.size() && i < b.tokens.size(); ++i) {
    const std::string &x = a.tokens[i], &y = b.tokens[i];
    if (x == y) continue;
    const bool a_new = a.added && i + 1 == a.tokens.size(), b_new = b.added && i + 1 == b.tokens.size();
    if (a_new != b_new) return b_new;
    if (a.index[i]) return x.size() != y.size() ? x.size() < y.size() : x < y;
    return x < y;
  }
  return a.tokens.size() < b.tokens.size();
}

bool IsPrefix(const Path& prefix, const Path& of) {
  return prefix.tokens.size() <= of.tokens.size() &&
         std::equal(prefix.tokens.begin(), prefix.tokens.end(), of.tokens.begin());
}

// The operations for one covering pointer, in diff's form.
void AppendOps(const json& before, const json& after, const json::json_pointer& p, json& patch) {
  if (!before.contains(p)) {  // a member only `after` has
    patch.push_back({{"op", "add"}, {"path", p.to_string()}, {"value", after.at(p)}});
    return;
  }
  if (before.at(p) == after.at(p)) return;
  for (json& op : json::diff(before.at(p), after.at(p), p.to_string())) patch.push_back(std::move(op));
}

}  // namespace

std::vector<json::json_pointer> CoveringPointers(const json& before, const json& after,
                                                 const std::vector<std::string>& touched) {
  std::vector<Path> paths;
  for (const std::string& text : touched) {
    json::json_pointer p(text);
    if (!before.contains(p) && !after.contains(p)) continue;  // nothing was written there
    // Stop at a subtree both have (diff compares it there, replacing it whole if its type
    // changed), or at a member only `after` has whose parent object both have (diff adds it
    // whole). (The empty pointer is the whole document, which both contain.)
    while (!p.empty()) {
      const bool in_before = before.contains(p), in_after = after.contains(p);
      if (in_before && in_after) break;
      const json::json_pointer parent = p.parent_pointer();
      if (!in_before && in_after && before.contains(parent) && before.at(parent).is_object() &&
          after.at(parent).is_object())
        break;
      p = parent;
    }
    paths.push_back(PathOf(before, after, p));
  }
  std::sort(paths.begin(), paths.end(), Before);
  std::vector<json::json_pointer> out;
  const Path* last = nullptr;
  for (const Path& path : paths) {
    if (last && IsPrefix(*last, path)) continue;  // inside (or equal to) the last kept subtree
    last = &path;
    json::json_pointer p;
    for (const std::string& token : path.tokens) p /= token;
    out.push_back(p);
  }
  return out;
}

json ScopedPatch(const json& before, const json& after, const std::vector<std::string>& touched) {
  json patch = json::array();
  for (const json::json_pointer& p : CoveringPointers(before, after, touched))
    AppendOps(before, after, p, patch);
  return patch;
}

json CopyTouched(const json& before, const std::vector<std::string>& touched) {
  json copy = json::object();
  if (!before.is_object()) return before;
  for (const std::string& text : touched) {
    const json::json_pointer pointer(text);
    std::vector<std::string> tokens;
    for (json::json_pointer q = pointer; !q.empty(); q = q.parent_pointer()) tokens.push_back(q.back());
    std::reverse(tokens.begin(), tokens.end());
    const json* from = &before;
    json* to = &copy;
    bool copied = false;
    for (const std::string& token : tokens) {
      if (from->is_object()) {
        if (!to->is_object()) *to = json::object();
        auto it = from->find(token);
        if (it == from->end()) {  // absent: its parent object's shape is enough
          copied = true;
          break;
        }
        from = &*it;
        to = &(*to)[token];
        continue;
      }
      if (from->is_array()) {
        const json::json_pointer index_pointer = json::json_pointer("/" + token);
        if (!from->contains(index_pointer)) {  // no such element: copy the array whole
          *to = *from;
          copied = true;
          break;
        }
        const size_t index = std::stoul(token);
        if (!to->is_array()) *to = json::array();
        while (to->size() <= index) to->push_back(nullptr);
        from = &(*from)[index];
        to = &(*to)[index];
        continue;
      }
      *to = *from;  // a scalar where the path goes on: diff replaces it whole
      copied = true;
      break;
    }
    if (!copied) *to = *from;
  }
  return copy;
}

}  // namespace graintune::webhook
