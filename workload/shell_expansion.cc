#include "workload/shell_expansion.h"

#include <cctype>
#include <string_view>

namespace graintune::workload {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsFieldSeparator(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Whether word.text[i] starts something bash expands.
bool ExpandsAt(const ShellWord& word, size_t i) {
  if (word.quoting[i] == kLiteral) return false;
  if (word.text[i] == '`') return true;
  if (word.text[i] != '$' || i + 1 >= word.text.size()) return false;
  const char next = word.text[i + 1];
  return next == '{' || next == '(' || IsNameStart(next) ||
         std::isdigit(static_cast<unsigned char>(next)) ||
         std::string_view("@*#?$!-").find(next) != std::string_view::npos;
}

// The end (one past) of the bracketed expansion starting at `open` (a `{` or `(`), or npos.
size_t MatchingClose(const std::string& text, size_t open) {
  const char o = text[open], c = o == '{' ? '}' : ')';
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == o) ++depth;
    if (text[i] == c && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

// The `word` of ${NAME:-word}, as its own ShellWord: the quotes written inside the braces
// (kept raw by the lexer) removed and applied.
ShellWord OperandWord(const ShellWord& word, size_t begin, size_t end) {
  ShellWord operand;
  char open_quote = 0;
  for (size_t i = begin; i < end; ++i) {
    const char c = word.text[i];
    if (word.quoting[i] == kUnquoted && (c == '"' || c == '\'') && (!open_quote || open_quote == c)) {
      open_quote = open_quote ? 0 : c;
      continue;
    }
    operand.text.push_back(c);
    operand.raw_offset.push_back(word.raw_offset[i]);
    operand.quoting.push_back(open_quote == '\'' ? kLiteral
                              : open_quote == '"' ? kDoubleQuoted
                                                  : word.quoting[i]);
  }
  return operand;
}

class Expander {
 public:
  Expander(ShellVariables& variables, bool split, int depth)
      : variables_(variables), split_(split), depth_(depth) {}

  ExpandedWord Run(const ShellWord& word) {
    size_t i = 0;
    while (i < word.text.size() && out_.known) {
      if (!ExpandsAt(word, i)) {
        Append(word.text[i], word.raw_offset[i]);
        ++i;
        continue;
      }
      i = ExpandAt(word, i);
    }
    EndField();
    if (!out_.known) out_.fields.clear();
    return std::move(out_);
  }

 private:
  // Expands the parameter at word.text[i] ('$' or '`'); returns the index after it.
  size_t ExpandAt(const ShellWord& word, size_t i) {
    const std::string& t = word.text;
    const bool quoted = word.quoting[i] == kDoubleQuoted;
    if (t[i] == '`') return Unknown("`...`", t.size());
    const char next = t[i + 1];
    if (next == '(') {
      const size_t end = MatchingClose(t, i + 1);
      return Unknown(t.substr(i, end == std::string::npos ? std::string::npos : end - i), t.size());
    }
    if (IsNameStart(next)) {
      size_t end = i + 1;
      while (end < t.size() && IsNameChar(t[end])) ++end;
      Substitute(t.substr(i + 1, end - i - 1), t.substr(i, end - i), quoted);
      return end;
    }
    if (next != '{') return Unknown(t.substr(i, 2), t.size());
    const size_t end = MatchingClose(t, i + 1);
    if (end == std::string::npos) return Unknown(t.substr(i), t.size());
    Braced(word, i, end, quoted);
    return end;
  }

  // ${...} from word.text[begin] ('$') to `end` (one past '}').
  void Braced(const ShellWord& word, size_t begin, size_t end, bool quoted) {
    const std::string& t = word.text;
    const std::string whole = t.substr(begin, end - begin);
    size_t name_end = begin + 2;
    while (name_end < end - 1 && IsNameChar(t[name_end])) ++name_end;
    const std::string name = t.substr(begin + 2, name_end - begin - 2);
    if (name.empty() || !IsNameStart(name[0])) return (void)Unknown(whole, 0);
    if (name_end == end - 1) return Substitute(name, whole, quoted);
    const bool colon = t[name_end] == ':';
    const size_t op_at = name_end + (colon ? 1 : 0);
    const char op = op_at < end - 1 ? t[op_at] : 0;
    if (op != '-' && op != '=' && op != '+') return (void)Unknown(whole, 0);
    const ShellValue* value = variables_.Find(name);
    if (!value || !value->known) return (void)Unknown(whole, 0);
    // The word applies when the variable is null (with ':') or unset (never here: an unseen
    // variable is unknown above); ${X+word} / ${X:+word} the other way round.
    const bool null = value->text.empty();
    const bool use_word = op == '+' ? !(colon && null) : (colon && null);
    if (!use_word) {
      if (op != '+') AppendValue(*value, quoted);
      return;
    }
    if (depth_ >= kMaxExpansionDepth) return (void)Unknown(whole, 0);
    Expander inner(variables_, /*split=*/false, depth_ + 1);
    ExpandedWord operand = inner.Run(OperandWord(word, op_at + 1, end - 1));
    if (!operand.known) return (void)Unknown(whole, 0);
    ShellValue result;
    for (const ShellWord& f : operand.fields) {
      result.text += f.text;
      result.raw_offset.insert(result.raw_offset.end(), f.raw_offset.begin(), f.raw_offset.end());
    }
    if (op == '=') variables_.Set(name, result);
    AppendValue(result, quoted);
  }

  void Substitute(const std::string& name, const std::string& written, bool quoted) {
    const ShellValue* value = variables_.Find(name);
    if (!value || !value->known) return (void)Unknown(written, 0);
    AppendValue(*value, quoted);
  }

  void AppendValue(const ShellValue& value, bool quoted) {
    for (size_t i = 0; i < value.text.size() && out_.known; ++i) {
      if (split_ && !quoted && IsFieldSeparator(value.text[i])) {
        EndField();
        continue;
      }
      Append(value.text[i], i < value.raw_offset.size() ? value.raw_offset[i] : kNotInScript);
    }
  }

  void Append(char c, size_t offset) {
    if (++bytes_ > kMaxExpandedBytes) return (void)Unknown("an expansion over 64 KiB", 0);
    field_.text.push_back(c);
    field_.raw_offset.push_back(offset);
  }

  void EndField() {
    if (!field_.text.empty()) out_.fields.push_back(std::move(field_));
    field_ = ShellWord{};
  }

  size_t Unknown(std::string part, size_t resume_at) {
    if (out_.known) out_.unknown_part = std::move(part);
    out_.known = false;
    return resume_at;
  }

  ShellVariables& variables_;
  const bool split_;
  const int depth_;
  ExpandedWord out_;
  ShellWord field_;
  size_t bytes_ = 0;
};

}  // namespace

void ShellVariables::SetFromEnv(const std::string& name, const std::string& value) {
  values_[name] = ShellValue{true, value, std::vector<size_t>(value.size(), kNotInScript)};
}

void ShellVariables::SetUnknown(const std::string& name) { values_[name] = ShellValue{false, "", {}}; }

void ShellVariables::ForgetValues() {
  for (auto& [name, value] : values_) value = ShellValue{false, "", {}};
}

void ShellVariables::Set(const std::string& name, ShellValue value) {
  values_[name] = std::move(value);
}

const ShellValue* ShellVariables::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

ExpandedWord ExpandWord(const ShellWord& word, ShellVariables& variables, bool split) {
  if (word.quoting.size() != word.text.size() || word.raw_offset.size() != word.text.size()) {
    ExpandedWord bad;
    bad.known = false;
    bad.unknown_part = word.text;
    return bad;
  }
  return Expander(variables, split, 0).Run(word);
}

std::string LiteralPrefix(const ShellWord& word) {
  for (size_t i = 0; i < word.text.size() && i < word.quoting.size(); ++i)
    if (ExpandsAt(word, i)) return word.text.substr(0, i);
  return word.text;
}

}  // namespace graintune::workload
