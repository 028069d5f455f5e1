#include "cli/flags.h"

#include <charconv>

#include "tuner/quantity.h"

namespace graintune::cli {

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
      if (value) return Status::Error("flag --" + name + " takes no value");
      flags.values_[name] = "true";
      continue;
    }
    if (!known.count(name)) return Status::Error("unknown flag --" + name);
    if (!value) {
      if (i + 1 >= args.size()) return Status::Error("flag --" + name + " needs a value");
      value = args[++i];
    }
    flags.values_[name] = *value;
  }
  return flags;
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

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
  int value = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || ptr != text->data() + text->size())
    return Status::Error("--" + name + ": '" + *text + "' is not an integer");
  return std::optional<int>(value);
}

Result<std::optional<double>> Flags::Quantity(const std::string& name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<double>();
  Result<double> value = ParseNonNegativeQuantity(*text, "--" + name);
  if (!value.ok()) return value.status();
  return std::optional<double>(*value);
}

}  // namespace graintune::cli
