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
    // Widen to a subtree present in both, of the same type (diff replaces a changed type whole),
    // or to a member only `after` has whose parent object both have (diff adds it whole).
    // (The empty pointer is the whole document, which both contain.)
    while (!p.empty()) {
      const bool in_before = before.contains(p), in_after = after.contains(p);
      if (in_before && in_after && before.at(p).type() == after.at(p).type()) break;
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

}  // namespace graintune::webhook
