// What graintune's reading of a `bash -c` script evaluates, and the first thing it does not.
//
// Admission reads a script as a list of simple commands run in order: assignments (NAME=value,
// export, readonly, local, declare without array or reference flags), ${NAME:=word} defaults,
// `cd`, `set` with harmless options (-e -u -x -v -o pipefail ...), commands joined by ; && || |
// and newlines, and MaxText's own command line. Anything else may set a variable, a positional
// parameter or an M_ variable in a way graintune cannot follow, or run a command only on some
// path: `source` / `.`, `eval`, `set --` and `set -a`, `shift`, `unset`, `read`, `mapfile`,
// arrays (`A=(...)`, `A+=(...)`, `declare -a`), a function the script calls (`f() {...}` or
// `function f`, named at its definition: defining one runs nothing, as xpk's SIGTERM handler),
// `if` / `case` / `for` / `while` / `until` / `select`, `[[`, `((`, `let`, `alias`, `getopts`,
// `printf -v` and here-documents. (A `trap` handler and a `{ ...; }` group are read in order.) FirstUnevaluatedConstruct names the first of
// them, by the index of the simple command it starts (ShellWord::command): from there on the
// reader treats every key of every MaxText start as unknown (workload/container_overrides.h),
// which is how admission stays on the safe side without predicting bash.
// Pure; linear in the script's words.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/shell_words.h"

namespace graintune::workload {

struct UnevaluatedConstruct {
  size_t command = 0;  // the simple command it starts at
  std::string what;    // e.g. "`source /etc/data/data.env`", "an `if` block", "an array assignment"
};

// `words`: every word of `script` (SplitShellWords without a filter).
std::optional<UnevaluatedConstruct> FirstUnevaluatedConstruct(std::string_view script,
                                                              const std::vector<ShellWord>& words);

}  // namespace graintune::workload
