#include "workload/script_constructs.h"

#include <map>
#include <set>

namespace graintune::workload {
namespace {

// Command heads that change the shell's state or its path in ways the reader does not follow.
const std::set<std::string, std::less<>>& UnevaluatedHeads() {
  static const std::set<std::string, std::less<>> kHeads = {
      "source", ".",     "eval",   "shift",  "unset", "read",  "readarray", "mapfile", "getopts",
      "if",     "elif",  "case",   "for",    "while", "until", "select",    "[[",       "((",
      "let",    "alias", "coproc"};
  return kHeads;
}

bool Unquoted(const ShellWord& w) { return w.quoting.find_first_not_of(kUnquoted) == std::string::npos; }

// Whether a `set` command's words (after `set`) leave variables and positional parameters alone:
// only options, none of them allexport (-a) or the end of options (which sets $1...).
bool HarmlessSet(const std::vector<const ShellWord*>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i]->text;
    if (a.size() < 2 || (a[0] != '-' && a[0] != '+') || a == "--") return false;
    if (a == "-o" || a == "+o") {
      if (i + 1 >= args.size() || args[i + 1]->text == "allexport") return false;
      ++i;
      continue;
    }
    if (a.find('a') != std::string::npos) return false;
  }
  return true;
}

// Whether a declaration's flags (declare/typeset/local/export/readonly) make arrays, references,
// globals or functions, or un-export.
bool UnevaluatedDeclaration(const std::vector<const ShellWord*>& args) {
  for (const ShellWord* a : args) {
    if (a->text.empty() || a->text[0] != '-') break;
    if (a->text.find_first_of("aAngfnF") != std::string::npos) return true;
  }
  return false;
}

// The command index of the first word at or after raw byte `offset`.
std::optional<size_t> CommandAt(const std::vector<ShellWord>& words, size_t offset) {
  for (const ShellWord& w : words)
    for (size_t o : w.raw_offset)
      if (o != kNotInScript && o >= offset) return w.command;
  return std::nullopt;
}

// Whether the simple command `cmd` starts a function's definition (`f() ...` or `function f`),
// and its name.
std::optional<std::string> DefinedFunction(const std::vector<const ShellWord*>& cmd, std::string_view script) {
  if (cmd.empty() || !Unquoted(*cmd[0])) return std::nullopt;
  if (cmd[0]->text == "function") return cmd.size() > 1 ? std::optional<std::string>(cmd[1]->text) : std::nullopt;
  const ShellWord& head = *cmd[0];
  if (cmd.size() != 1 || head.raw_offset.empty() || head.raw_offset.back() == kNotInScript) return std::nullopt;
  size_t at = head.raw_offset.back() + 1;
  while (at < script.size() && (script[at] == ' ' || script[at] == '\t')) ++at;
  if (script.substr(at, 1) != "(") return std::nullopt;
  ++at;
  while (at < script.size() && (script[at] == ' ' || script[at] == '\t')) ++at;
  if (script.substr(at, 1) != ")") return std::nullopt;
  return head.text;
}

}  // namespace

std::optional<UnevaluatedConstruct> FirstUnevaluatedConstruct(std::string_view script,
                                                              const std::vector<ShellWord>& words) {
  std::optional<UnevaluatedConstruct> first;
  auto note = [&](size_t command, std::string what) {
    if (!first || command < first->command) first = UnevaluatedConstruct{command, std::move(what)};
  };
  // Here-documents and here-strings: their lines are no commands.
  if (const size_t at = script.find("<<"); at != std::string_view::npos)
    if (std::optional<size_t> c = CommandAt(words, at)) note(*c > 0 ? *c - 1 : 0, "a here-document");
  // Group each command's words.
  std::vector<std::vector<const ShellWord*>> commands;
  for (const ShellWord& w : words) {
    if (w.command >= commands.size()) commands.resize(w.command + 1);
    commands[w.command].push_back(&w);
  }
  // Functions: a definition runs nothing (xpk's wrapper defines a SIGTERM handler it only traps);
  // a call runs its body with its arguments, which the reader does not follow: the construct is
  // the definition, once the script calls it.
  std::map<std::string, size_t> functions;  // name -> the command that defines it
  for (size_t c = 0; c < commands.size(); ++c) {
    const std::vector<const ShellWord*>& cmd = commands[c];
    if (cmd.empty() || !Unquoted(*cmd[0])) continue;
    if (std::optional<std::string> name = DefinedFunction(cmd, script)) {
      functions.emplace(*name, c);
      continue;
    }
    if (auto called = functions.find(cmd[0]->text); called != functions.end())
      note(called->second, "a function (" + called->first + "()), called at command " + std::to_string(c));
  }
  for (size_t c = 0; c < commands.size(); ++c) {
    const std::vector<const ShellWord*>& cmd = commands[c];
    if (cmd.empty()) continue;
    // Skip leading assignments (NAME=value cmd): the head is the first other word.
    size_t h = 0;
    std::string name;
    size_t value_start = 0;
    while (h < cmd.size() && cmd[h]->assignment_position && ParseShellAssignment(*cmd[h], name, value_start)) {
      // NAME=( ... ): the lexer ends the word at the parenthesis.
      const ShellWord& a = *cmd[h];
      const size_t end = a.raw_offset.empty() ? kNotInScript : a.raw_offset.back() + 1;
      if (value_start == a.text.size() && end != kNotInScript && end < script.size() && script[end] == '(')
        note(c, "an array assignment (" + a.text + "(...))");
      ++h;
    }
    if (h >= cmd.size()) continue;
    const ShellWord& head = *cmd[h];
    // NAME+=( ... ): not an assignment word to the lexer, the same array to bash.
    if (head.text.ends_with("+=") && !head.raw_offset.empty() && head.raw_offset.back() != kNotInScript &&
        head.raw_offset.back() + 1 < script.size() && script[head.raw_offset.back() + 1] == '(') {
      note(c, "an array assignment (" + head.text + "(...))");
      continue;
    }
    if (!Unquoted(head)) continue;
    const std::vector<const ShellWord*> args(cmd.begin() + static_cast<std::ptrdiff_t>(h + 1), cmd.end());
    if (UnevaluatedHeads().count(head.text)) {
      std::string shown = head.text;
      for (size_t i = 0; i < args.size() && i < 2; ++i) shown += " " + args[i]->text;
      note(c, "`" + shown.substr(0, 80) + "`");
    } else if (head.text == "set" && !HarmlessSet(args)) {
      note(c, "`set` with positional parameters or allexport");
    } else if ((head.text == "declare" || head.text == "typeset" || head.text == "local" || head.text == "export" ||
                head.text == "readonly") && UnevaluatedDeclaration(args)) {
      note(c, "`" + head.text + " " + args.front()->text + "`");
    } else if (head.text == "printf" && !args.empty() && args.front()->text == "-v") {
      note(c, "`printf -v`");
    }
  }
  return first;
}

}  // namespace graintune::workload
