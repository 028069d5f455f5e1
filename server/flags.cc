#include "server/flags.h"

#include <charconv>
#include <cstdlib>
#include <iostream>

#include "base/log.h"
#include "base/numbers.h"

namespace graintune::server {

Result<Flags> Flags::Parse(const std::vector<std::string>& args, const std::set<std::string>& known,
                           const std::set<std::string>& booleans) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      flags.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (booleans.count(name)) {
      if (value && *value != "true" && *value != "false")
        return Status::Error("flag --" + name + " takes no value (or =true / =false)");
      flags.values_[name] = {value.value_or("true")};
      continue;
    }
    if (!known.count(name)) return Status::Error("unknown flag --" + name);
    if (!value) {
      if (i + 1 >= args.size()) return Status::Error("flag --" + name + " needs a value");
      value = args[++i];
    }
    flags.values_[name].push_back(*value);
  }
  return flags;
}

void SetUpLogging(const std::string& program, const Flags& flags) {
  SetLogProgram(program);
  Result<LogLevel> level = ParseLogLevel(flags.Get("log-level").value_or("info"));
  if (!level.ok()) ExitWithUsageError(program, "--log-level: " + level.error());
  SetLogLevel(*level);
}

void ExitWithHelpIfAsked(int argc, char** argv, std::string_view usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    }
  }
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Flags::All(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

bool Flags::Bool(const std::string& name) const { return Get(name) == "true"; }

Result<std::optional<double>> Flags::Number(const std::string& name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<double>();
  std::optional<double> value = ParseFiniteNumber(*text);
  if (!value) return Status::Error("--" + name + ": '" + *text + "' is not a number");
  return value;
}

Result<std::optional<int>> Flags::Integer(const std::string& name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<int>();
  std::optional<int> value = ParseInt(*text);
  if (!value) return Status::Error("--" + name + ": '" + *text + "' is not an integer");
  return value;
}

Result<std::optional<int>> Flags::IntegerIn(const std::string& name, int lo, int hi) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<int>();
  std::optional<int> value = ParseInt(*text);
  if (!value || *value < lo || *value > hi)
    return Status::Error("--" + name + " wants an integer in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "], got '" + *text + "'");
  return value;
}

Result<std::optional<std::chrono::seconds>> Flags::Duration(const std::string& name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<std::chrono::seconds>();
  std::optional<std::chrono::seconds> d = ParseDuration(*text);
  if (!d)
    return Status::Error("--" + name + " wants a duration such as 45s, 30m, 720h or 30d, got '" +
                         *text + "'");
  return d;
}

std::optional<std::chrono::seconds> ParseDuration(const std::string& text) {
  if (text == "0") return std::chrono::seconds(0);
  if (text.size() < 2) return std::nullopt;
  long long n = 0;
  const char* last = text.data() + text.size() - 1;
  auto [ptr, ec] = std::from_chars(text.data(), last, n);
  if (ec != std::errc() || ptr != last || n < 0) return std::nullopt;
  long long unit = 0;
  switch (*last) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    default: return std::nullopt;
  }
  if (n > (1LL << 40) / unit) return std::nullopt;  // far past any sensible setting
  return std::chrono::seconds(n * unit);
}

void ExitWithUsageError(const std::string& program, const std::string& message) {
  std::cerr << program << ": " << message << "\n";
  std::exit(2);
}

std::vector<std::string> Arguments(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

}  // namespace graintune::server
