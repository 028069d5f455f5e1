#include "tests/integration/promql_names.h"

#include <cctype>

namespace graintune::testing {

namespace {

struct Token {
  enum Kind { kIdent, kString, kNumber, kPunct } kind;
  std::string text;
};

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IdentChar(char c) { return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Tokens outside [ ] (ranges, subqueries and offsets' durations are not names).
Result<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {  // a comment runs to the end of the line
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '[') {
      const size_t end = s.find(']', i);
      if (end == std::string_view::npos) return Status::Error("unbalanced '[' at " + std::to_string(i));
      i = end + 1;
    } else if (c == '"' || c == '\'' || c == '`') {
      std::string text;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] == '\\' && c != '`' && j + 1 < s.size()) ++j;
        text += s[j];
      }
      if (j >= s.size()) return Status::Error("unterminated string at " + std::to_string(i));
      out.push_back({Token::kString, text});
      i = j + 1;
    } else if (IdentStart(c)) {
      size_t j = i;
      while (j < s.size() && IdentChar(s[j])) ++j;
      out.push_back({Token::kIdent, std::string(s.substr(i, j - i))});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      out.push_back({Token::kNumber, std::string(s.substr(i, j - i))});
      i = j;
    } else {
      static const std::string_view kTwo[] = {"=~", "!~", "!=", "==", ">=", "<="};
      std::string op(1, c);
      for (std::string_view two : kTwo)
        if (s.substr(i, 2) == two) op = two;
      if (op.size() == 1 && std::string_view("(){},=<>+-*/%^!@").find(c) == std::string_view::npos)
        return Status::Error(std::string("unexpected '") + c + "' at " + std::to_string(i));
      out.push_back({Token::kPunct, op});
      i += op.size();
    }
  }
  return out;
}

bool IsPunct(const std::vector<Token>& t, size_t i, std::string_view text) {
  return i < t.size() && t[i].kind == Token::kPunct && t[i].text == text;
}

bool IsGroupingKeyword(const std::string& w) {
  return w == "by" || w == "without" || w == "on" || w == "ignoring" || w == "group_left" ||
         w == "group_right";
}

bool IsAggregator(const std::string& w) {
  static const std::set<std::string> kAggregators = {
      "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
      "bottomk", "topk", "quantile"};
  return kAggregators.count(w) > 0;
}

bool IsKeyword(const std::string& w) {
  static const std::set<std::string> kKeywords = {"and", "or", "unless", "bool", "offset",
                                                  "inf", "nan", "Inf", "NaN"};
  return kKeywords.count(w) > 0;
}

// Reads `{label op "value", ...}` from t[i] == "{"; returns the index after "}".
Result<size_t> ReadMatchers(const std::vector<Token>& t, size_t i, VectorSelector& selector) {
  ++i;
  while (!IsPunct(t, i, "}")) {
    if (i + 2 >= t.size() || t[i].kind != Token::kIdent || t[i + 1].kind != Token::kPunct ||
        t[i + 2].kind != Token::kString)
      return Status::Error("malformed label matcher in the selector of '" + selector.metric + "'");
    selector.matchers.push_back({t[i].text, t[i + 1].text, t[i + 2].text});
    i += 3;
    if (IsPunct(t, i, ",")) ++i;
  }
  return i + 1;
}

}  // namespace

Result<PromqlNames> NamesInPromql(std::string_view expr) {
  Result<std::vector<Token>> tokens = Tokenize(expr);
  if (!tokens.ok()) return tokens.status();
  const std::vector<Token>& t = *tokens;
  int depth = 0;
  for (const Token& k : t) {
    if (k.kind != Token::kPunct) continue;
    if (k.text == "(" || k.text == "{") ++depth;
    if (k.text == ")" || k.text == "}") --depth;
    if (depth < 0) break;
  }
  if (depth != 0) return Status::Error("unbalanced brackets in '" + std::string(expr) + "'");
  PromqlNames names;
  for (size_t i = 0; i < t.size();) {
    const Token& k = t[i];
    if (k.kind == Token::kIdent && IsGroupingKeyword(k.text)) {
      ++i;
      if (!IsPunct(t, i, "(")) continue;  // group_left without labels
      for (++i; i < t.size() && !IsPunct(t, i, ")"); ++i)
        if (t[i].kind == Token::kIdent) names.grouping_labels.insert(t[i].text);
      ++i;
    } else if (k.kind == Token::kIdent &&
               (IsPunct(t, i + 1, "(") || IsKeyword(k.text) ||
                (IsAggregator(k.text) && i + 1 < t.size() && IsGroupingKeyword(t[i + 1].text)))) {
      ++i;  // a function, an aggregation or a keyword
    } else if (k.kind == Token::kIdent || IsPunct(t, i, "{")) {
      VectorSelector selector;
      if (k.kind == Token::kIdent) selector.metric = t[i++].text;
      if (IsPunct(t, i, "{")) {
        Result<size_t> next = ReadMatchers(t, i, selector);
        if (!next.ok()) return next.status();
        i = *next;
      }
      names.selectors.push_back(std::move(selector));
    } else {
      ++i;
    }
  }
  return names;
}

Result<PromqlNames> NamesInVariableQuery(std::string_view query) {
  constexpr std::string_view kLabelValues = "label_values(";
  while (!query.empty() && std::isspace(static_cast<unsigned char>(query.front()))) query.remove_prefix(1);
  while (!query.empty() && std::isspace(static_cast<unsigned char>(query.back()))) query.remove_suffix(1);
  if (!query.starts_with(kLabelValues) || !query.ends_with(")")) return NamesInPromql(query);
  std::string_view inner = query.substr(kLabelValues.size(), query.size() - kLabelValues.size() - 1);
  const size_t comma = inner.rfind(',');
  const size_t brace = inner.rfind('}');
  std::string_view selector, label = inner;
  if (comma != std::string_view::npos && (brace == std::string_view::npos || comma > brace)) {
    selector = inner.substr(0, comma);
    label = inner.substr(comma + 1);
  }
  Result<PromqlNames> names = NamesInPromql(selector);
  if (!names.ok()) return names;
  Result<PromqlNames> label_names = NamesInPromql(label);
  if (!label_names.ok()) return label_names;
  if (label_names->selectors.size() != 1 || !label_names->selectors[0].matchers.empty())
    return Status::Error("label_values: '" + std::string(label) + "' is not a label name");
  names->grouping_labels.insert(label_names->selectors[0].metric);
  return names;
}

}  // namespace graintune::testing
