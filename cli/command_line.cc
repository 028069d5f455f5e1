#include "cli/command_line.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace graintune::cli {

using nlohmann::json;

std::string ToString(OutputFormat format) {
  switch (format) {
    case OutputFormat::kText: return "text";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kYaml: return "yaml";
  }
  return "text";
}

namespace {

bool Allows(const CommandSpec& spec, OutputFormat format) {
  return std::find(spec.outputs.begin(), spec.outputs.end(), format) != spec.outputs.end();
}

std::string AllowedOutputs(const CommandSpec& spec) {
  std::string text;
  for (OutputFormat f : spec.outputs) text += (text.empty() ? "" : "|") + ToString(f);
  return text;
}

const FlagSpec* FindShort(const CommandSpec& spec, char c) {
  for (const FlagSpec& f : spec.flags)
    if (f.short_name == c) return &f;
  return nullptr;
}

bool TakesValue(const CommandSpec& spec, const std::string& name) {
  if (name == "output") return true;
  for (const FlagSpec& f : spec.flags)
    if (f.name == name) return !f.value_name.empty();
  return false;
}

// Rewrites the short forms into long ones so server::Flags parses one grammar.
Result<std::vector<std::string>> Lengthen(const CommandSpec& spec,
                                          const std::vector<std::string>& args, bool& help) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help = true;
      continue;
    }
    if (arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos) {
      // A long value flag takes the next argument as it is, even "-1" or "-".
      out.push_back(arg);
      if (TakesValue(spec, arg.substr(2)) && i + 1 < args.size()) out.push_back(args[++i]);
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') {
      out.push_back(arg);  // positional, "-" (stdin), or --name=value
      continue;
    }
    const char c = arg[1];
    std::string name;
    if (c == 'o') {
      name = "output";
    } else if (const FlagSpec* f = FindShort(spec, c)) {
      name = f->name;
    } else {
      return Status::Error("unknown flag " + arg.substr(0, 2));
    }
    std::string rest = arg.substr(2);
    if (c != 'o' && !TakesValue(spec, name)) {
      // A boolean short flag (-A) takes no value: what follows is the next argument.
      if (!rest.empty()) return Status::Error("flag -" + std::string(1, c) + " takes no value");
      out.push_back("--" + name);
      continue;
    }
    if (!rest.empty() && rest[0] == '=') rest = rest.substr(1);
    if (!rest.empty()) {
      out.push_back("--" + name + "=" + rest);
    } else {
      if (i + 1 >= args.size()) return Status::Error("flag -" + std::string(1, c) + " needs a value");
      out.push_back("--" + name + "=" + args[++i]);
    }
  }
  return out;
}

// A plain scalar YAML would read as something other than this string (a number, a boolean,
// null, empty): such strings are written double-quoted, so "4" stays a string.
bool ReadsAsNonString(const std::string& text) {
  if (text.empty()) return true;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> kWords = {"true", "false", "yes", "no", "on", "off", "y",
                                               "n", "null", "~", ".inf", "-.inf", "+.inf",
                                               ".nan"};
  if (kWords.count(lower)) return true;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size()) return true;
  return lower.rfind("0x", 0) == 0 || lower.rfind("0o", 0) == 0;
}

void Emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (ReadsAsNonString(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& item : value) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (ReadsAsNonString(text)) out << YAML::DoubleQuoted;
      out << text;
      return;
    }
    case json::value_t::boolean: out << value.get<bool>(); return;
    case json::value_t::number_integer: out << value.get<long long>(); return;
    case json::value_t::number_unsigned: out << value.get<unsigned long long>(); return;
    case json::value_t::number_float: out << value.get<double>(); return;
    default: out << YAML::Null; return;
  }
}

}  // namespace

Result<CommandLine> ParseCommandLine(const CommandSpec& spec, const std::vector<std::string>& args) {
  CommandLine line;
  Result<std::vector<std::string>> long_form = Lengthen(spec, args, line.help);
  if (!long_form.ok()) return long_form.status();
  if (line.help) return line;  // --help wins over anything else on the line
  std::set<std::string> values = {"output"}, booleans;
  for (const FlagSpec& f : spec.flags) (f.value_name.empty() ? booleans : values).insert(f.name);
  Result<server::Flags> flags = server::Flags::Parse(*long_form, values, booleans);
  if (!flags.ok()) return flags.status();
  line.flags = *flags;
  line.positionals = line.flags.positional();
  for (const std::string& p : line.positionals)
    if (p == "--") return Status::Error("'--' is not supported");
  if (line.positionals.size() > spec.max_positionals) {
    const std::string& stray = line.positionals[spec.max_positionals];
    return Status::Error(spec.max_positionals == 0
                             ? "unexpected argument '" + stray + "' (this command takes only flags)"
                             : "unexpected argument '" + stray + "'");
  }
  if (std::optional<std::string> output = line.flags.Get("output")) {
    std::optional<OutputFormat> format;
    for (OutputFormat f : {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kYaml})
      if (*output == ToString(f)) format = f;
    if (!format || !Allows(spec, *format))
      return Status::Error("--output must be one of " + AllowedOutputs(spec) + ", got '" +
                           *output + "'");
    line.output = *format;
  }
  return line;
}

std::string HelpText(const CommandSpec& spec, const std::string& program) {
  std::ostringstream text;
  text << spec.summary << "\n\nusage: " << program << " " << spec.name << " " << spec.usage << "\n";
  if (!spec.description.empty()) text << "\n" << spec.description << "\n";
  std::vector<FlagSpec> flags = spec.flags;
  if (spec.outputs.size() > 1)
    flags.push_back({"output", 'o', "FORMAT", "text", "output format: " + AllowedOutputs(spec)});
  flags.push_back({"help", 'h', "", "", "this help"});
  std::vector<std::string> left;
  size_t width = 0;
  for (const FlagSpec& f : flags) {
    std::string l = f.short_name ? std::string("-") + f.short_name + ", " : "    ";
    l += "--" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    width = std::max(width, l.size());
    left.push_back(l);
  }
  text << "\nflags:\n";
  for (size_t i = 0; i < flags.size(); ++i) {
    text << "  " << left[i] << std::string(width - left[i].size() + 2, ' ') << flags[i].help;
    if (!flags[i].default_text.empty()) text << " (default: " << flags[i].default_text << ")";
    text << "\n";
  }
  if (!spec.examples.empty()) text << "\nexamples:\n" << spec.examples;
  return text.str();
}

void WriteStructured(const json& value, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kYaml) {
    YAML::Emitter emitter;
    Emit(emitter, value);
    out << emitter.c_str() << "\n";
    return;
  }
  out << value.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

std::optional<int> HelpOrUsageError(const CommandSpec& spec, const Result<CommandLine>& line,
                                    std::ostream& out, std::ostream& err) {
  if (!line.ok()) {
    err << "graintune " << spec.name << ": " << line.error() << "\nSee 'graintune " << spec.name
        << " --help'.\n";
    return 2;
  }
  if (line->help) {
    out << HelpText(spec);
    return 0;
  }
  return std::nullopt;
}

}  // namespace graintune::cli
