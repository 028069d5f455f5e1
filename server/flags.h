// Flags: one strict command-line parser for every graintune binary (the three servers and the
// `graintune` CLI's subcommands).
//
// Each binary declares its flags once, as FlagSpecs (name, value, default, help): ParseDeclared
// reads them, the typed getters fall back to the declared default, and UsageText renders
// the same list for --help. The CLI renders its own help from the same FlagSpec (command_line.h).
//
// Accepts `--name value`, `--name=value` and booleans as bare `--name` (or `--name=true`,
// `--name=false`); a value flag given more than once keeps every value in order (All) and Get
// returns the last. Parse() rejects flags the program does not declare, so a typo is an error
// with the flag's name, never silently ignored. Typed getters return errors naming the flag;
// nothing here exits or throws. ExitOnUsageError is the one place a server main turns such an
// error into "program: message" and exit status 2.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graintune::server {

// One flag, declared once.
struct FlagSpec {
  std::string name;          // long name, without the dashes
  char short_name = 0;       // e.g. 'f'; 0 for none (the CLI's subcommands only)
  std::string value_name;    // "N", "FILE", ...; empty for a boolean flag
  // What applies when the flag is absent. ParseDeclared applies it as the flag's value (a
  // server's spec writes the value itself, e.g. "8443"); the CLI only shows it in its help.
  // Empty: nothing applies.
  std::string default_text;
  std::string help;
  bool required = false;     // unbracketed in the usage synopsis (the binary checks it: it may
                             // have an alternative)
  bool repeated = false;     // may be given more than once ("..." in the synopsis)
};

class Flags {
 public:
  // The flags `specs` declares (those with a value_name take a value; the others are booleans);
  // an absent flag with a default_text reads as that value (Has() stays false).
  static Result<Flags> ParseDeclared(const std::vector<std::string>& args,
                                     const std::vector<FlagSpec>& specs);
  // `known` lists value flags; `booleans` flags that take no value.
  static Result<Flags> Parse(const std::vector<std::string>& args, const std::set<std::string>& known,
                             const std::set<std::string>& booleans = {});

  // Whether the flag was given (a declared default does not count).
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given, else the declared default; nullopt when neither.
  std::optional<std::string> Get(const std::string& name) const;
  // Every value given, in order.
  std::vector<std::string> All(const std::string& name) const;
  // A boolean flag: false when absent or given as --name=false.
  bool Bool(const std::string& name) const;
  // Absent -> nullopt; present but malformed -> error naming the flag.
  Result<std::optional<double>> Number(const std::string& name) const;
  Result<std::optional<int>> Integer(const std::string& name) const;
  // An integer in [lo, hi].
  Result<std::optional<int>> IntegerIn(const std::string& name, int lo, int hi) const;
  // A duration such as 45s, 30m, 720h or 30d (ParseDuration).
  Result<std::optional<std::chrono::seconds>> Duration(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::string> positional_;
};

// A duration written as a whole number and one unit: "45s", "30m", "720h", "30d"; "0" is zero.
// nullopt for anything else (no unit, fractions, negative, overflow).
std::optional<std::chrono::seconds> ParseDuration(const std::string& text);

// Sets the process's log program name and level from --log-level (default info); a bad value is
// a usage error (exit status 2) naming the flag. For server mains.
void SetUpLogging(const std::string& program, const Flags& flags);

// A server binary's command line: its name, what it is (one line), and its flags.
struct ServerCommand {
  std::string program;  // "graintune-operator"
  std::string summary;
  std::vector<FlagSpec> flags;  // --log-level is added by ParseServerFlags / UsageText
};

// The --help text: the summary, a synopsis ("usage:\n  PROGRAM [--flag V]..." wrapped at 100
// columns), then every flag with its help and default.
std::string UsageText(const ServerCommand& command);

// What a server main does first: --help or -h prints UsageText (exit 0); an undeclared flag, a
// missing value or a positional argument is a usage error (exit 2); then SetUpLogging.
Flags ParseServerFlags(const ServerCommand& command, int argc, char** argv);

// `--help` or `-h` among argv[1..argc): `usage` on stdout and exit status 0. Server mains call
// it before Parse, which would refuse --help as an unknown flag.
void ExitWithHelpIfAsked(int argc, char** argv, std::string_view usage);

// argv[1..argc) as strings.
std::vector<std::string> Arguments(int argc, char** argv);

// The value of `result`, or (for an error) "program: message" on stderr and exit status 2.
// For server mains only: a usage error is the one failure that ends a process at start-up.
// "program: message" on stderr and exit status 2.
[[noreturn]] void ExitWithUsageError(const std::string& program, const std::string& message);

template <typename T>
T ExitOnUsageError(const std::string& program, Result<T> result) {
  if (!result.ok()) ExitWithUsageError(program, result.error());
  return std::move(result).value();
}

}  // namespace graintune::server
