#include "workload/kubernetes_expansion.h"

#include <algorithm>

#include "workload/shell_words.h"

namespace graintune::workload {

KubernetesExpanded ExpandKubernetesReferences(
    std::string_view input, const std::function<KubernetesVariable(const std::string&)>& lookup) {
  KubernetesExpanded out;
  // Most arguments hold no reference at all: nothing to map.
  if (input.find("$(") == std::string_view::npos && input.find("$$") == std::string_view::npos) {
    out.text = std::string(input);
    return out;
  }
  auto keep = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      out.text.push_back(input[i]);
      out.raw_offset.push_back(i);
    }
  };
  size_t i = 0;
  while (i < input.size()) {
    if (input[i] != '$' || i + 1 == input.size()) {
      keep(i, i + 1);
      ++i;
      continue;
    }
    if (input[i + 1] == '$') {  // $$ -> $
      keep(i, i + 1);
      out.changed = true;
      i += 2;
      continue;
    }
    const size_t close = input[i + 1] == '(' ? input.find(')', i + 2) : std::string_view::npos;
    if (close == std::string_view::npos) {  // $x, or a $( never closed: as written
      keep(i, i + 2);
      i += 2;
      continue;
    }
    const std::string name(input.substr(i + 2, close - i - 2));
    KubernetesVariable v = lookup(name);
    const size_t grown = out.text.size() + v.value.size() - std::min(out.text.size(), i);
    if (v.kind == KubernetesVariable::Kind::kKnown && grown > kMaxKubernetesExpansionGrowth) {
      v.kind = KubernetesVariable::Kind::kUnknown;  // too large to follow
    }
    if (v.kind == KubernetesVariable::Kind::kKnown) {
      out.text += v.value;
      out.raw_offset.insert(out.raw_offset.end(), v.value.size(), kNotInScript);
      out.changed = true;
    } else {
      if (v.kind == KubernetesVariable::Kind::kUnknown && out.unknown_reference.empty())
        out.unknown_reference = "$(" + name + ")";
      keep(i, close + 1);
    }
    i = close + 1;
  }
  if (!out.changed) out.raw_offset.clear();
  return out;
}

}  // namespace graintune::workload
