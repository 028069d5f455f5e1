// One command-line grammar for every `graintune` subcommand, on kubectl's conventions.
//
// A CommandSpec lists a subcommand's flags (name, value, default, help) and how many
// positional arguments it takes; ParseCommandLine turns arguments into a CommandLine or an
// error naming the offending argument, and HelpText renders the spec for `--help`. Every
// subcommand gets the same common flags without declaring them:
//   -h, --help             help for the subcommand (CommandLine::help)
//   -o, --output FORMAT    text | json | yaml (only those the spec allows), validated here
// Short forms: `-o json`, `-ojson`, `-o=json`; `-f FILE` where a spec declares `f`. A lone `-`
// is a positional (stdin). Anything else that starts with a dash and is not declared, and any
// positional beyond the spec's count, is an error: nothing typed is silently ignored.
// Pure: no I/O; WriteStructured only writes to the stream it is given.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/flags.h"

namespace graintune::cli {

enum class OutputFormat { kText, kJson, kYaml };
std::string ToString(OutputFormat format);

// A flag, declared once: the servers' FlagSpec (server/flags.h). Here default_text is only shown
// in the help: a subcommand applies its defaults where it reads the flag.
using server::FlagSpec;

struct CommandSpec {
  std::string name;          // "recommend"
  std::string summary;       // one line, for `graintune help`
  std::string usage;         // after "graintune NAME ", e.g. "[flags] [FILE...]"
  std::string description;   // paragraphs printed under the usage line
  std::vector<FlagSpec> flags;
  size_t max_positionals = 0;
  std::vector<OutputFormat> outputs = {OutputFormat::kText, OutputFormat::kJson,
                                       OutputFormat::kYaml};
  std::string examples;      // printed last, verbatim
};

struct CommandLine {
  bool help = false;
  server::Flags flags;
  OutputFormat output = OutputFormat::kText;
  std::vector<std::string> positionals;
};

Result<CommandLine> ParseCommandLine(const CommandSpec& spec, const std::vector<std::string>& args);

// `program`: how the usage line names the tool.
std::string HelpText(const CommandSpec& spec, const std::string& program = "graintune");

// `value` as indented JSON or as a YAML document (kText is not structured: use kJson's form).
void WriteStructured(const nlohmann::json& value, OutputFormat format, std::ostream& out);

// What every subcommand does first: on an error, "graintune NAME: message" and a pointer to
// --help on `err` (exit code 2); on --help, the help on `out` (exit code 0). nullopt: go on.
std::optional<int> HelpOrUsageError(const CommandSpec& spec, const Result<CommandLine>& line,
                                    std::ostream& out, std::ostream& err);

}  // namespace graintune::cli
