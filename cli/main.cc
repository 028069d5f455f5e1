// graintune: the command-line tool. Dispatches to one subcommand; see `graintune help`.
#include <iostream>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage = R"(usage: graintune COMMAND [flags]

commands:
  recommend   the worker count graintune picks for a host, workload and dataset
  simulate    step times of a simulated MaxText host with N Grain workers
  calibrate   fit the simulator to observed step logs (--csv FILE)
  explain     what the webhook would do to every object of a manifest (FILE.yaml)
  help        this text
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune::cli;
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const Args args(argv + 2, argv + argc);
  if (command == "recommend") return RunRecommend(args, std::cout, std::cerr);
  if (command == "simulate") return RunSimulate(args, std::cout, std::cerr);
  if (command == "calibrate") return RunCalibrate(args, std::cout, std::cerr);
  if (command == "explain") return RunExplain(args, std::cout, std::cerr);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "graintune: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
