#include "webhook/worker_count_edit.h"

#include <algorithm>

#include "workload/container_overrides.h"

namespace graintune::webhook {

using json = nlohmann::json;

namespace {

// In-place edits of strings first, then argv insertions, then env appends.
int Rank(const Edit& e) {
  return e.op == Edit::Op::kInsertArg ? 1 : e.op == Edit::Op::kAppendEnv ? 2 : 0;
}

// One argv insertion or env append; returns the absolute pointer it changed.
std::string ApplyStructural(json& object, const Edit& e, int value) {
  const std::string text = std::to_string(value);
  if (e.op == Edit::Op::kInsertArg) {
    // pointer is /args/N or /command/N: insert after N.
    const size_t slash = e.pointer.rfind('/');
    const std::string array = e.pointer.substr(0, slash);
    const long index = std::stol(e.pointer.substr(slash + 1));
    json& arr = object[json::json_pointer(e.container_pointer + array)];
    arr.insert(arr.begin() + index + 1, e.key + "=" + text);
    return e.container_pointer + array + "/" + std::to_string(index + 1);
  }
  json& env = object[json::json_pointer(e.container_pointer + "/env")];
  if (!env.is_array()) env = json::array();
  env.push_back({{"name", workload::EnvNameForKey(e.key)}, {"value", text}});
  return e.container_pointer + "/env/" + std::to_string(env.size() - 1);
}

}  // namespace

std::vector<AppliedEdit> ApplyEdits(json& object, std::vector<Edit> edits,
                                    const std::function<int(const Edit&)>& value_of) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    if (Rank(a) != Rank(b)) return Rank(a) < Rank(b);
    if (a.container_pointer != b.container_pointer) return a.container_pointer < b.container_pointer;
    if (a.pointer != b.pointer) return a.pointer < b.pointer;
    return a.begin < b.begin;
  });
  std::vector<AppliedEdit> applied;
  applied.reserve(edits.size());
  for (size_t i = 0; i < edits.size();) {
    const Edit& first = edits[i];
    if (Rank(first) != 0) {
      const int value = value_of(first);
      applied.push_back({first, ApplyStructural(object, first, value), value});
      ++i;
      continue;
    }
    // Every in-place edit of this string, by ascending offset: one rebuild.
    size_t end = i;
    while (end < edits.size() && Rank(edits[end]) == 0 &&
           edits[end].container_pointer == first.container_pointer &&
           edits[end].pointer == first.pointer)
      ++end;
    const std::string pointer = first.container_pointer + first.pointer;
    std::string& text = object[json::json_pointer(pointer)].get_ref<std::string&>();
    std::string rebuilt;
    rebuilt.reserve(text.size() + 16 * (end - i));
    size_t at = 0;
    for (; i < end; ++i) {
      const Edit& e = edits[i];
      if (e.begin < at || e.begin > text.size()) continue;  // overlapping: the first one wins
      const int value = value_of(e);
      rebuilt.append(text, at, e.begin - at);
      if (e.op == Edit::Op::kReplaceRange) {
        rebuilt += std::to_string(value);
        at = std::min(e.end, text.size());
      } else {
        rebuilt += " " + e.key + "=" + std::to_string(value);
        at = e.begin;
      }
      applied.push_back({e, pointer, value});
    }
    rebuilt.append(text, at, std::string::npos);
    text = std::move(rebuilt);
  }
  return applied;
}

}  // namespace graintune::webhook
