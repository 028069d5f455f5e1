// libFuzzer target: the shell-word scanner (workload/shell_words.h) over arbitrary scripts.
//
// The planner rewrites a `bash -c` script in place at the offsets this scanner reports, so the
// offsets are what must hold, not just the absence of crashes. Checked (a violation traps):
//   - every word has one offset per character, each inside the script, pointing at that very
//     character, strictly increasing within the word and from one word to the next;
//   - a keep filter drops whole words and leaves the kept ones exactly as without it;
//   - a parsed assignment is the word's text as [--]key=value with a key of the documented
//     alphabet, its raw range lies in the script, and a contiguous value is the script's bytes
//     in that range (what the planner replaces);
//   - ParseArgAssignment of the whole input agrees with the same rules on a plain argv element.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workload/shell_words.h"

namespace {

using graintune::workload::Assignment;
using graintune::workload::ShellWord;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool HasEquals(std::string_view word) { return word.find('=') != std::string_view::npos; }

void CheckAssignment(const std::string& text, const Assignment& a, std::string_view raw) {
  const size_t prefix = text.rfind("--", 0) == 0 ? 2 : 0;
  Check(text == text.substr(0, prefix) + a.key + "=" + a.value);
  Check(!a.key.empty() && (std::isalpha(static_cast<unsigned char>(a.key[0])) || a.key[0] == '_'));
  for (char c : a.key)
    Check(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  Check(a.value_begin <= a.value_end && a.value_end <= raw.size());
  if (a.contiguous) Check(raw.substr(a.value_begin, a.value_end - a.value_begin) == a.value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  const std::vector<ShellWord> words = graintune::workload::SplitShellWords(script);
  bool any_offset = false;
  size_t last = 0;
  std::vector<const ShellWord*> with_equals;
  for (const ShellWord& w : words) {
    Check(w.text.size() == w.raw_offset.size());
    for (size_t i = 0; i < w.text.size(); ++i) {
      const size_t at = w.raw_offset[i];
      Check(at < script.size() && script[at] == w.text[i]);
      Check(!any_offset || at > last);
      any_offset = true;
      last = at;
    }
    if (HasEquals(w.text)) with_equals.push_back(&w);
    Assignment a;
    if (graintune::workload::ParseAssignment(w, a)) CheckAssignment(w.text, a, script);
  }

  const std::vector<ShellWord> kept = graintune::workload::SplitShellWords(
      script, [](std::string_view w) { return HasEquals(w); });
  Check(kept.size() == with_equals.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    Check(kept[i].text == with_equals[i]->text);
    Check(kept[i].raw_offset == with_equals[i]->raw_offset);
  }

  Assignment arg;
  if (graintune::workload::ParseArgAssignment(script, arg)) {
    CheckAssignment(std::string(script), arg, script);
    Check(arg.contiguous);
  }
  return 0;
}
