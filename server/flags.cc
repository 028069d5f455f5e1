#include "server/flags.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <sstream>

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

Result<Flags> Flags::ParseDeclared(const std::vector<std::string>& args,
                                   const std::vector<FlagSpec>& specs) {
  std::set<std::string> values, booleans;
  for (const FlagSpec& f : specs) (f.value_name.empty() ? booleans : values).insert(f.name);
  Result<Flags> flags = Parse(args, values, booleans);
  if (!flags.ok()) return flags;
  for (const FlagSpec& f : specs)
    if (!f.default_text.empty()) flags->defaults_[f.name] = f.default_text;
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
  if (auto it = values_.find(name); it != values_.end()) return it->second.back();
  if (auto it = defaults_.find(name); it != defaults_.end()) return it->second;
  return std::nullopt;
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

namespace {

const FlagSpec kLogLevelFlag{.name = "log-level", .value_name = "error|warning|info|debug",
                             .default_text = "info", .help = "what is logged (debug: a line per request)"};

std::vector<FlagSpec> WithLogLevel(const ServerCommand& command) {
  std::vector<FlagSpec> specs = command.flags;
  specs.push_back(kLogLevelFlag);
  return specs;
}

std::string Synopsis(const FlagSpec& f) {
  std::string s = "--" + f.name;
  if (!f.value_name.empty()) s += " " + f.value_name;
  if (!f.required) s = "[" + s + "]";
  return f.repeated ? s + "..." : s;
}

}  // namespace

std::string UsageText(const ServerCommand& command) {
  const std::vector<FlagSpec> specs = WithLogLevel(command);
  std::ostringstream text;
  text << command.program << ": " << command.summary << "\n\nusage:\n  " << command.program;
  const size_t indent = command.program.size() + 3;  // under the first flag
  size_t column = indent - 1;
  for (const FlagSpec& f : specs) {
    const std::string part = Synopsis(f);
    if (column + 1 + part.size() > 100 && column > indent) {
      text << "\n" << std::string(indent, ' ');
      column = indent;
    } else {
      text << " ";
      ++column;
    }
    text << part;
    column += part.size();
  }
  std::vector<std::string> left;
  size_t width = 0;
  for (const FlagSpec& f : specs) {
    left.push_back("--" + f.name + (f.value_name.empty() ? "" : " " + f.value_name));
    width = std::max(width, left.back().size());
  }
  text << "\n\nflags:\n";
  for (size_t i = 0; i < specs.size(); ++i) {
    text << "  " << left[i] << std::string(width + 2 - left[i].size(), ' ') << specs[i].help;
    if (!specs[i].default_text.empty()) text << " (default: " << specs[i].default_text << ")";
    text << "\n";
  }
  return text.str();
}

Flags ParseServerFlags(const ServerCommand& command, int argc, char** argv) {
  ExitWithHelpIfAsked(argc, argv, UsageText(command));
  Flags flags = ExitOnUsageError(command.program, Flags::ParseDeclared(Arguments(argc, argv), WithLogLevel(command)));
  if (!flags.positional().empty())
    ExitWithUsageError(command.program, "unexpected argument '" + flags.positional().front() + "'");
  SetUpLogging(command.program, flags);
  return flags;
}

std::vector<std::string> Arguments(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

}  // namespace graintune::server
