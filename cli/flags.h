// Flags: the command line of one `graintune` subcommand.
//
// Accepts `--name value`, `--name=value` and bare boolean `--name`; positional arguments are
// kept in order. Parse() rejects flags the command does not declare, so a typo is an error
// with the flag's name, never silently ignored. Typed getters return errors naming the flag.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/status.h"

namespace graintune::cli {

class Flags {
 public:
  // `known` lists value flags; `booleans` flags that take no value.
  static Result<Flags> Parse(const std::vector<std::string>& args, const std::set<std::string>& known,
                             const std::set<std::string>& booleans = {});

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> Get(const std::string& name) const;
  bool Bool(const std::string& name) const { return Has(name); }
  // Absent -> nullopt; present but malformed -> error naming the flag.
  Result<std::optional<double>> Number(const std::string& name) const;
  Result<std::optional<int>> Integer(const std::string& name) const;
  // Kubernetes quantity ("2Gi", "500m").
  Result<std::optional<double>> Quantity(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace graintune::cli
