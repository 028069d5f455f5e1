// The `graintune` subcommands. Each takes its arguments (after the subcommand name), writes
// its result to `out` and problems to `err`, and returns the process exit code: 0 on success,
// 2 on a usage or input error (with a message naming what is wrong). None of them throws.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace graintune::cli {

using Args = std::vector<std::string>;

int RunRecommend(const Args& args, std::ostream& out, std::ostream& err);
int RunSimulate(const Args& args, std::ostream& out, std::ostream& err);
int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err);
int RunExplain(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace graintune::cli
