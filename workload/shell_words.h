// ShellWords: the words of a shell script as xpk and people write them, with byte offsets.
//
// graintune must change exactly one token inside `bash -c "..."` scripts and leave every other
// byte as written, so it needs to know where each word's characters sit in the raw text. This
// is a small POSIX-like lexer, not a shell: it understands single and double quotes, backslash
// escapes, whitespace and the operators ; & | ( ) and newlines as word breaks, and keeps $(...)
// and ${...} inside the word they appear in. Nothing is executed or expanded here; each word
// keeps how its characters were quoted and where it stands in its command, so that
// workload/shell_expansion.h can expand it as bash would.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace graintune::workload {

// How a character of a word was quoted.
inline constexpr char kUnquoted = 'u';
inline constexpr char kDoubleQuoted = 'd';
inline constexpr char kLiteral = 'l';  // single quotes or a backslash: never expanded

// A byte offset for a character that is not in the script (it came from the environment).
inline constexpr size_t kNotInScript = static_cast<size_t>(-1);

struct ShellWord {
  std::string text;                // the word with quotes removed
  std::vector<size_t> raw_offset;  // raw_offset[i]: byte offset in the script of text[i]
  std::string quoting;             // quoting[i]: kUnquoted, kDoubleQuoted or kLiteral
  size_t command = 0;   // which simple command it belongs to (; & | ( ) < > newline separate)
  size_t position = 0;  // its index among the words of that command
  // Where bash reads NAME=value as a variable assignment: every word before it in its command
  // is an assignment or a declaration (export, declare, local, readonly, typeset, and options).
  bool assignment_position = false;
};

// `keep`, when given, decides from a finished word's text whether it is returned at all (callers
// that want only `key=value` words skip copying the rest).
std::vector<ShellWord> SplitShellWords(std::string_view script,
                                       bool (*keep)(std::string_view word) = nullptr);

// A `key=value` assignment within a word (or a plain argv element).
struct Assignment {
  std::string key;
  std::string value;
  size_t value_begin = 0;  // raw byte range of the value in the script / argv element
  size_t value_end = 0;
  bool contiguous = true;  // false when quotes split the value: it cannot be replaced in place
};

// Parses `word` as key=value where key is [A-Za-z_][A-Za-z0-9_.]*; a leading "--" is allowed.
// Returns false for anything else. A value with a character outside the script
// (kNotInScript) or split by quotes is not contiguous.
bool ParseAssignment(const ShellWord& word, Assignment& out);

// Parses `word` as a shell variable assignment NAME=value (NAME an identifier, the `=`
// unquoted): `name` and the index in word.text where the value starts.
bool ParseShellAssignment(const ShellWord& word, std::string& name, size_t& value_start);

// The same for a plain argv element (no quoting: offsets are into the element itself).
bool ParseArgAssignment(std::string_view arg, Assignment& out);

}  // namespace graintune::workload
