// Flags: one strict command-line parser for every graintune binary (the three servers and the
// `graintune` CLI's subcommands).
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

class Flags {
 public:
  // `known` lists value flags; `booleans` flags that take no value.
  static Result<Flags> Parse(const std::vector<std::string>& args, const std::set<std::string>& known,
                             const std::set<std::string>& booleans = {});

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given; nullopt when absent.
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
  std::vector<std::string> positional_;
};

// A duration written as a whole number and one unit: "45s", "30m", "720h", "30d"; "0" is zero.
// nullopt for anything else (no unit, fractions, negative, overflow).
std::optional<std::chrono::seconds> ParseDuration(const std::string& text);

// Sets the process's log program name and level from --log-level (default info); a bad value is
// a usage error (exit status 2) naming the flag. For server mains.
void SetUpLogging(const std::string& program, const Flags& flags);

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
