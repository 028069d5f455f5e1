// How a shell started from an exec-form argv (a container's command and args) finds its script:
// `bash -c SCRIPT`, and every option form that ends in a command string, as bash, sh (dash) and
// zsh parse their own options: `-lc`, `-l -c`, `-e -c`, `-xeuc`, `--login -c`, `-o pipefail -c`,
// `-eo pipefail -c`, `+o posix -c`, `--rcfile F -c`, `-c -- SCRIPT`. The words after the script
// are its positional parameters: the first is $0, the rest $1... ("$@" holds only those), and
// MaxText sees none of them unless the script passes them on.
// A shell given a script file instead (`bash run.sh`), or reading stdin, has no command string.
// Pure; bounded by the argv's length.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace graintune::workload {

struct ShellInvocation {
  size_t script = 0;            // argv index of the command string
  size_t positional_begin = 0;  // argv index of $0 (== argv.size() when none)
};

// Whether `word` names a POSIX shell graintune reads (bash, sh, dash, zsh, ash, ksh; any path).
bool IsShell(const std::string& word);

// The command string of the shell started by argv[at], or nullopt: argv[at] is no shell, or it
// starts without -c (a script file, stdin), or -c has no string after it.
std::optional<ShellInvocation> ParseShellInvocation(const std::vector<std::string>& argv, size_t at);

}  // namespace graintune::workload
