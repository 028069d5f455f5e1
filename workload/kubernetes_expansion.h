// KubernetesExpansion: the kubelet's own $(VAR) expansion of a container's command, args and
// env values, done before any process or shell sees them.
//
// The rule (Kubernetes' expansion package, the same in kubelet v1.36.3):
//   $(NAME)  the value of NAME among the variables given, when it is one; unchanged when not
//            (then a shell sees $(NAME), a command substitution)
//   $$       a single $ (so $$(NAME) is the literal text $(NAME))
//   $x       unchanged, for any other character x; a $( with no closing ) is unchanged
// NAME is everything up to the first `)`.
//
// Every output character keeps the byte offset of the input character it came from, or
// kNotInScript when it came from a variable's value, so that a value can still be rewritten in
// place where it was written.
//
// Pure; never throws. Bounded: the output is at most the input's size plus
// kMaxKubernetesExpansionGrowth bytes; a reference that would grow it further stays as written
// and counts as unknown (env values built from each other cannot double their way past it).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graintune::workload {

inline constexpr size_t kMaxKubernetesExpansionGrowth = 64 * 1024;

// What a variable reference resolves to.
struct KubernetesVariable {
  enum class Kind {
    kUndefined,  // not among the container's variables: the reference stays as written
    kKnown,      // its value is `value`
    kUnknown,    // defined, to a value graintune cannot see (a Secret, a field of the pod)
  } kind = Kind::kUndefined;
  std::string value;
};

struct KubernetesExpanded {
  std::string text;
  // Per character of text: its offset in the input, or kNotInScript. Only when `changed`: an
  // unchanged text's offsets are the input's own.
  std::vector<size_t> raw_offset;
  bool changed = false;  // whether text differs from the input
  // The first reference to a variable graintune cannot see ("" when none): its $(NAME) stays in
  // `text`, as the process will not see it.
  std::string unknown_reference;
};

KubernetesExpanded ExpandKubernetesReferences(
    std::string_view input, const std::function<KubernetesVariable(const std::string&)>& lookup);

}  // namespace graintune::workload
