// graintune: the command-line tool (cli/commands.h); also kubectl's plugin when invoked as
// kubectl-graintune (`kubectl graintune ...`).
#include <iostream>

#include "cli/commands.h"
#include "server/flags.h"

int main(int argc, char** argv) {
  return graintune::cli::RunGraintune(graintune::server::Arguments(argc, argv), std::cin,
                                      std::cout, std::cerr,
                                      graintune::cli::ProgramName(argc > 0 ? argv[0] : ""));
}
