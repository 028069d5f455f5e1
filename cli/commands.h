// The `graintune` subcommands. Each takes its arguments (after the subcommand name), writes
// its result to `out` and problems to `err`, and returns the process exit code: 0 on success
// (and for --help), 2 on a usage or input error (with a message naming what is wrong). None
// of them throws. Each has a CommandSpec (cli/command_line.h) that its --help renders.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command_line.h"

namespace graintune::cli {

using Args = std::vector<std::string>;

const CommandSpec& RecommendSpec();
const CommandSpec& SimulateSpec();
const CommandSpec& CalibrateSpec();
const CommandSpec& ExplainSpec();
const CommandSpec& StatusSpec();

int RunRecommend(const Args& args, std::ostream& out, std::ostream& err);
int RunSimulate(const Args& args, std::ostream& out, std::ostream& err);
int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err);
// Reads manifests from files, or from `in` for "-".
int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
// Reads GrainTunings from the kubeconfig's cluster; 1 when the cluster cannot be read.
int RunStatus(const Args& args, std::ostream& out, std::ostream& err);

// The whole tool: `graintune COMMAND ...`, `graintune help [COMMAND]`, `graintune --version`.
// `program` is how the usage names the tool ("graintune", or "kubectl graintune" as a plugin).
int RunGraintune(const Args& args, std::istream& in, std::ostream& out, std::ostream& err,
                 const std::string& program = "graintune");

// How the tool was invoked, from argv[0]: "kubectl graintune" for the kubectl plugin's name
// (kubectl-graintune, any folder), else "graintune".
std::string ProgramName(const std::string& argv0);

// "graintune 0.1.0", the version of the build.
std::string VersionLine();

}  // namespace graintune::cli
