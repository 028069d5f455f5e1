// graintune: dispatch to one subcommand, the top-level help and the version.
#include <functional>

#include "cli/commands.h"

#ifndef GRAINTUNE_VERSION
#error "GRAINTUNE_VERSION is set by cli/CMakeLists.txt"
#endif

namespace graintune::cli {

namespace {

struct Command {
  const CommandSpec& spec;
  std::function<int(const Args&, std::istream&, std::ostream&, std::ostream&)> run;
};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {RecommendSpec(), [](const Args& a, std::istream&, std::ostream& o, std::ostream& e) {
         return RunRecommend(a, o, e);
       }},
      {ExplainSpec(), RunExplain},
      {SimulateSpec(), [](const Args& a, std::istream&, std::ostream& o, std::ostream& e) {
         return RunSimulate(a, o, e);
       }},
      {CalibrateSpec(), [](const Args& a, std::istream&, std::ostream& o, std::ostream& e) {
         return RunCalibrate(a, o, e);
       }},
      {StatusSpec(), [](const Args& a, std::istream&, std::ostream& o, std::ostream& e) {
         return RunStatus(a, o, e);
       }},
  };
  return kCommands;
}

std::string Usage(const std::string& program) {
  std::string text =
      program + ": picks MaxText's grain_worker_count for TPU hosts, as the graintune webhook "
      "does.\n\nusage: " + program + " COMMAND [flags]\n\ncommands:\n";
  for (const Command& c : Commands()) {
    text += "  " + c.spec.name + std::string(12 - c.spec.name.size(), ' ') + c.spec.summary + "\n";
  }
  text += "  help        help for graintune or a command (" + program + " help COMMAND)\n"
          "  version     the version of this build (also --version)\n\n"
          "Run '" + program + " COMMAND --help' for a command's flags and their defaults.\n";
  return text;
}

const Command* Find(const std::string& name) {
  for (const Command& c : Commands())
    if (c.spec.name == name) return &c;
  return nullptr;
}

}  // namespace

std::string VersionLine() { return std::string("graintune ") + GRAINTUNE_VERSION; }

std::string ProgramName(const std::string& argv0) {
  const std::string base = argv0.substr(argv0.find_last_of('/') + 1);
  return base == "kubectl-graintune" ? "kubectl graintune" : "graintune";
}

int RunGraintune(const Args& args, std::istream& in, std::ostream& out, std::ostream& err,
                 const std::string& program) {
  if (args.empty()) {
    err << Usage(program);
    return 2;
  }
  const std::string& command = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (command == "--version" || command == "version") {
    if (!rest.empty()) {
      err << "graintune version: unexpected argument '" << rest[0] << "'\n";
      return 2;
    }
    out << VersionLine() << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    if (rest.empty()) {
      out << Usage(program);
      return 0;
    }
    const Command* c = Find(rest[0]);
    if (!c || rest.size() > 1) {
      err << program << " help: unknown command '" << rest.back() << "'\n" << Usage(program);
      return 2;
    }
    out << HelpText(c->spec, program);
    return 0;
  }
  if (const Command* c = Find(command)) return c->run(rest, in, out, err);
  err << program << ": unknown command '" << command << "'\n" << Usage(program);
  return 2;
}

}  // namespace graintune::cli
