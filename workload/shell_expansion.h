// ShellExpansion: a script word expanded as bash expands it, from the variables graintune can
// see, or "cannot tell".
//
// What bash does to a word before the command sees it, limited to what a trainer's script
// needs: $NAME, ${NAME}, ${NAME:-word}, ${NAME-word}, ${NAME:=word}, ${NAME=word},
// ${NAME:+word}, ${NAME+word}; an unquoted expansion's result is split into fields on spaces,
// tabs and newlines (a double-quoted one is not); single-quoted or backslash-escaped `$` is
// literal. Anything else that bash would expand makes the word unknown: a command substitution
// $(...) or `...`, arithmetic, positional and special parameters ($1, $@, $$, ...), other
// ${...} forms, and a variable graintune cannot see (not assigned earlier in the script, not in
// the container's env as graintune resolved it: it may come from the image).
//
// Every character of an expanded field keeps its byte offset in the script when it came from
// the script's own text (a literal, or a variable the script assigned), else kNotInScript, so
// that a value can still be rewritten in place where it was written.
//
// Bounded: an expansion's result over kMaxExpandedBytes is unknown (`A="$A $A"` repeated cannot
// grow it); a default word is expanded to a nesting depth of kMaxExpansionDepth at most. Pure;
// never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload/shell_words.h"

namespace graintune::workload {

inline constexpr size_t kMaxExpandedBytes = 64 * 1024;
inline constexpr int kMaxExpansionDepth = 4;

// A variable's value as the script sees it.
struct ShellValue {
  bool known = true;
  std::string text;
  std::vector<size_t> raw_offset;  // per character; kNotInScript when not from the script
};

// The variables a script starts with (the container's env) and assigns as it runs.
class ShellVariables {
 public:
  // Set to a value from outside the script (the container's env).
  void SetFromEnv(const std::string& name, const std::string& value);
  // Set, but to something graintune cannot see (a Secret, a field of the pod, ...).
  void SetUnknown(const std::string& name);
  void Set(const std::string& name, ShellValue value);
  // Every variable set so far becomes unknown (a construct graintune does not evaluate, such as
  // `source`, may have changed any of them).
  void ForgetValues();
  // The value of `name`; nullopt when it is not set as far as graintune knows (bash would
  // expand it to "", but the image may set it: callers treat it as unknown).
  const ShellValue* Find(const std::string& name) const;

 private:
  std::map<std::string, ShellValue> values_;
};

struct ExpandedWord {
  bool known = true;
  std::string unknown_part;       // when !known: the part that cannot be expanded, e.g. "$(date)"
  std::vector<ShellWord> fields;  // the words the command sees (text + raw_offset)
};

// Expands `word` (from SplitShellWords). `split`: whether unquoted expansions are split into
// fields (false for the value of an assignment, which bash never splits). ${NAME=word} and
// ${NAME:=word} assign to `variables`, as bash does.
ExpandedWord ExpandWord(const ShellWord& word, ShellVariables& variables, bool split = true);

// The part of word.text before its first `$` or backquote that bash would expand (the literal
// prefix a caller can still read a key from).
std::string LiteralPrefix(const ShellWord& word);

}  // namespace graintune::workload
