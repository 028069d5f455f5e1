#include "workload/shell_words.h"

#include <array>
#include <cctype>
#include <numeric>

namespace graintune::workload {
namespace {

bool IsBreak(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' ||
         c == '(' || c == ')' || c == '<' || c == '>';
}

// Characters that stand for themselves inside a word: not a quote, backslash, `$` or break.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = true;
  for (unsigned char c : std::string_view("'\"\\$ \t\n\r;&|()<>")) t[c] = false;
  return t;
}();

bool IsKeyStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

}  // namespace

std::vector<ShellWord> SplitShellWords(std::string_view s, bool (*keep)(std::string_view word)) {
  // The word being read grows in scratch buffers that keep their capacity; each finished word
  // is copied out at its exact size (this runs on every admission of a bash -c trainer, and
  // growing two fresh buffers a character at a time was most of its cost).
  std::vector<ShellWord> words;
  std::string text;
  std::vector<size_t> offsets;
  text.reserve(256);
  offsets.reserve(256);
  bool in_word = false;
  auto flush = [&] {
    if (in_word && (keep == nullptr || keep(text))) words.push_back(ShellWord{text, offsets});
    text.clear();
    offsets.clear();
    in_word = false;
  };
  auto put = [&](char c, size_t at) {
    text.push_back(c);
    offsets.push_back(at);
    in_word = true;
  };
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\'') {  // single quotes: everything literal up to the next '
      in_word = true;
      ++i;
      while (i < s.size() && s[i] != '\'') put(s[i], i), ++i;
      ++i;
    } else if (c == '"') {  // double quotes: backslash escapes \" \\ \$ \`
      in_word = true;
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size() &&
            (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`')) {
          ++i;
        }
        put(s[i], i);
        ++i;
      }
      ++i;
    } else if (c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] == '\n') {  // line continuation
        flush();
        i += 2;
      } else {
        put(s[i + 1], i + 1);
        i += 2;
      }
    } else if (c == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
      // $(...) / ${...}: part of the word, nested parentheses balanced.
      const char open = s[i + 1], close = open == '(' ? ')' : '}';
      int depth = 0;
      while (i < s.size()) {
        if (s[i] == open) ++depth;
        if (s[i] == close && --depth == 0) {
          put(s[i], i);
          ++i;
          break;
        }
        put(s[i], i);
        ++i;
      }
    } else if (c == '#' && !in_word) {  // comment to end of line
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (IsBreak(c)) {
      flush();
      ++i;
    } else {
      // This character and the plain ones after it, in one go (most of a script is plain).
      size_t end = i + 1;
      while (end < s.size() && kPlain[static_cast<unsigned char>(s[end])]) ++end;
      text.append(s.substr(i, end - i));
      const size_t first = offsets.size();
      offsets.resize(first + (end - i));
      std::iota(offsets.begin() + static_cast<std::ptrdiff_t>(first), offsets.end(), i);
      in_word = true;
      i = end;
    }
  }
  flush();
  return words;
}

bool ParseAssignment(const ShellWord& word, Assignment& out) {
  const std::string& t = word.text;
  size_t start = t.rfind("--", 0) == 0 ? 2 : 0;
  if (start >= t.size() || !IsKeyStart(t[start])) return false;
  size_t eq = start;
  while (eq < t.size() && IsKeyChar(t[eq])) ++eq;
  if (eq >= t.size() || t[eq] != '=') return false;
  out.key = t.substr(start, eq - start);
  out.value = t.substr(eq + 1);
  if (out.value.empty()) {
    const size_t after = word.raw_offset[eq] + 1;
    out.value_begin = out.value_end = after;
    out.contiguous = true;
    return true;
  }
  out.value_begin = word.raw_offset[eq + 1];
  out.value_end = word.raw_offset.back() + 1;
  out.contiguous = out.value_end - out.value_begin == out.value.size();
  return true;
}

bool ParseArgAssignment(std::string_view arg, Assignment& out) {
  ShellWord word;
  word.text = std::string(arg);
  for (size_t i = 0; i < arg.size(); ++i) word.raw_offset.push_back(i);
  return ParseAssignment(word, out);
}

}  // namespace graintune::workload
