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

namespace {

bool IsCommandSeparator(char c) { return c != ' ' && c != '\t'; }  // among IsBreak's

bool IsDeclaration(std::string_view word) {
  return word == "export" || word == "declare" || word == "local" || word == "readonly" ||
         word == "typeset";
}

bool LooksLikeShellAssignment(const std::string& text, const std::string& quoting) {
  if (text.empty() || !IsKeyStart(text[0]) || quoting[0] != kUnquoted) return false;
  size_t i = 1;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
  return i < text.size() && text[i] == '=' && quoting[i] == kUnquoted;
}

// The word being read, and where the words stand in their commands.
class WordBuilder {
 public:
  explicit WordBuilder(bool (*keep)(std::string_view)) : keep_(keep) {
    text_.reserve(256);
    offsets_.reserve(256);
    quoting_.reserve(256);
  }
  void Put(char c, size_t at, char quoting) {
    text_.push_back(c);
    offsets_.push_back(at);
    quoting_.push_back(quoting);
    in_word_ = true;
  }
  void PutRun(std::string_view s, size_t at) {
    text_.append(s);
    const size_t first = offsets_.size();
    offsets_.resize(first + s.size());
    std::iota(offsets_.begin() + static_cast<std::ptrdiff_t>(first), offsets_.end(), at);
    quoting_.append(s.size(), kUnquoted);
    in_word_ = true;
  }
  void MarkInWord() { in_word_ = true; }
  bool InWord() const { return in_word_; }
  // Ends the word being read (if any) at a break `c` (' ' when at the end of the script).
  void Flush(char c = ' ') {
    if (in_word_) {
      const bool assignment = LooksLikeShellAssignment(text_, quoting_);
      if (keep_ == nullptr || keep_(text_))
        words_.push_back(ShellWord{text_, offsets_, quoting_, command_, position_, prefix_});
      prefix_ = prefix_ && (assignment || IsDeclaration(text_) ||
                            (after_declaration_ && !text_.empty() && text_[0] == '-'));
      after_declaration_ = after_declaration_ || IsDeclaration(text_);
      ++position_;
    }
    text_.clear();
    offsets_.clear();
    quoting_.clear();
    in_word_ = false;
    if (IsCommandSeparator(c) && position_ > 0) {
      ++command_;
      position_ = 0;
      prefix_ = true;
      after_declaration_ = false;
    }
  }
  std::vector<ShellWord> Take() { return std::move(words_); }

 private:
  bool (*keep_)(std::string_view);
  std::vector<ShellWord> words_;
  std::string text_, quoting_;
  std::vector<size_t> offsets_;
  bool in_word_ = false;
  size_t command_ = 0, position_ = 0;
  bool prefix_ = true, after_declaration_ = false;
};

}  // namespace

std::vector<ShellWord> SplitShellWords(std::string_view s, bool (*keep)(std::string_view word)) {
  // The word being read grows in scratch buffers that keep their capacity; each finished word
  // is copied out at its exact size (this runs on every admission of a bash -c trainer).
  WordBuilder w(keep);
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\'') {  // single quotes: everything literal up to the next '
      w.MarkInWord();
      ++i;
      while (i < s.size() && s[i] != '\'') w.Put(s[i], i, kLiteral), ++i;
      ++i;
    } else if (c == '"') {  // double quotes: backslash escapes \" \\ \$ \`
      w.MarkInWord();
      ++i;
      while (i < s.size() && s[i] != '"') {
        char quoting = kDoubleQuoted;
        if (s[i] == '\\' && i + 1 < s.size() &&
            (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`')) {
          ++i;
          quoting = kLiteral;
        }
        w.Put(s[i], i, quoting);
        ++i;
      }
      ++i;
    } else if (c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] == '\n') {  // line continuation
        w.Flush();
        i += 2;
      } else {
        w.Put(s[i + 1], i + 1, kLiteral);
        i += 2;
      }
    } else if (c == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
      // $(...) / ${...}: part of the word, nested parentheses balanced.
      const char open = s[i + 1], close = open == '(' ? ')' : '}';
      int depth = 0;
      while (i < s.size()) {
        if (s[i] == open) ++depth;
        const bool closes = s[i] == close && --depth == 0;
        w.Put(s[i], i, kUnquoted);
        ++i;
        if (closes) break;
      }
    } else if (c == '#' && !w.InWord()) {  // comment to end of line
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (IsBreak(c)) {
      w.Flush(c);
      ++i;
    } else {
      // This character and the plain ones after it, in one go (most of a script is plain).
      size_t end = i + 1;
      while (end < s.size() && kPlain[static_cast<unsigned char>(s[end])]) ++end;
      w.PutRun(s.substr(i, end - i), i);
      i = end;
    }
  }
  w.Flush();
  return w.Take();
}

bool ParseShellAssignment(const ShellWord& word, std::string& name, size_t& value_start) {
  if (!LooksLikeShellAssignment(word.text, word.quoting)) return false;
  const size_t eq = word.text.find('=');
  name = word.text.substr(0, eq);
  value_start = eq + 1;
  return true;
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
  out.contiguous = true;
  for (size_t i = eq + 1; i < word.raw_offset.size(); ++i)
    if (word.raw_offset[i] == kNotInScript ||
        (i > eq + 1 && word.raw_offset[i] != word.raw_offset[i - 1] + 1))
      out.contiguous = false;
  if (!out.contiguous && (out.value_begin == kNotInScript || word.raw_offset.back() == kNotInScript))
    out.value_begin = out.value_end = 0;
  return true;
}

bool ParseArgAssignment(std::string_view arg, Assignment& out) {
  ShellWord word;
  word.text = std::string(arg);
  for (size_t i = 0; i < arg.size(); ++i) word.raw_offset.push_back(i);
  word.quoting.assign(arg.size(), kLiteral);
  return ParseAssignment(word, out);
}

}  // namespace graintune::workload
