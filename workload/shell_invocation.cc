#include "workload/shell_invocation.h"

namespace graintune::workload {
namespace {

// Long options that take the next word as their value (bash's --rcfile and --init-file).
bool LongOptionTakesValue(const std::string& word) { return word == "--rcfile" || word == "--init-file"; }

}  // namespace

bool IsShell(const std::string& word) {
  const std::string base = word.substr(word.find_last_of('/') + 1);
  return base == "bash" || base == "sh" || base == "dash" || base == "zsh" || base == "ash" || base == "ksh";
}

std::optional<ShellInvocation> ParseShellInvocation(const std::vector<std::string>& argv, size_t at) {
  if (at >= argv.size() || !IsShell(argv[at])) return std::nullopt;
  bool command_string = false;
  size_t i = at + 1;
  while (i < argv.size()) {
    const std::string& word = argv[i];
    if (word == "--" || word == "-") {  // the end of the options
      ++i;
      break;
    }
    if (word.size() < 2 || (word[0] != '-' && word[0] != '+')) break;  // the first operand
    if (word.starts_with("--")) {
      i += LongOptionTakesValue(word) ? 2 : 1;
      continue;
    }
    // A cluster of one-letter options: `o` and `O` take the next word (an option's name).
    size_t values = 0;
    for (size_t k = 1; k < word.size(); ++k) {
      if (word[k] == 'c' && word[0] == '-') command_string = true;
      if (word[k] == 'o' || word[k] == 'O') ++values;
    }
    i += 1 + values;
  }
  if (!command_string || i >= argv.size()) return std::nullopt;
  return ShellInvocation{.script = i, .positional_begin = i + 1};
}

}  // namespace graintune::workload
