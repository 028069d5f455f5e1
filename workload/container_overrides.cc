#include "workload/container_overrides.h"

#include <algorithm>
#include <cctype>

#include "workload/shell_words.h"

namespace graintune::workload {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsConfigPath(const std::string& word) {
  return (EndsWith(word, ".yml") || EndsWith(word, ".yaml")) && word.find('=') == std::string::npos;
}

// The script words ScanContainer looks at: assignments and config paths.
bool MayBeAssignmentOrConfig(std::string_view word) {
  return word.find('=') != std::string_view::npos || word.ends_with(".yml") || word.ends_with(".yaml");
}

bool MentionsMaxText(const std::string& text) {
  return text.find("MaxText") != std::string::npos || text.find("maxtext") != std::string::npos ||
         text.find("train.py") != std::string::npos;
}

// A shell invoked with -c: the following argv element is a script.
bool IsShellDashC(const std::string& shell, const std::string& flag) {
  const std::string base = shell.substr(shell.find_last_of('/') + 1);
  const bool is_shell = base == "bash" || base == "sh" || base == "dash" || base == "zsh";
  return is_shell && flag.size() >= 2 && flag[0] == '-' && flag.back() == 'c' &&
         flag.find_first_not_of("-abcefhkmnptuvxBCEHPT") == std::string::npos;
}

void AddAssignment(ContainerOverrides& out, const Assignment& a, OverrideLocation location,
                   const std::string& pointer) {
  Override o;
  o.location = location;
  o.pointer = pointer;
  o.value = a.value;
  o.value_begin = a.value_begin;
  o.value_end = a.value_end;
  o.replaceable = a.contiguous;
  const std::string env_key = MaxTextKeyFromEnv(a.key);
  o.key = env_key.empty() ? a.key : env_key;  // `M_FOO=1 python ...` inside a script
  out.overrides.push_back(std::move(o));
}

}  // namespace

std::string ToString(OverrideLocation location) {
  switch (location) {
    case OverrideLocation::kArg: return "args";
    case OverrideLocation::kScript: return "script";
    case OverrideLocation::kEnv: return "env";
  }
  return "args";
}

std::string MaxTextKeyFromEnv(const std::string& env_name) {
  if (env_name.size() < 3 || env_name.rfind("M_", 0) != 0) return "";
  std::string key;
  for (size_t i = 2; i < env_name.size(); ++i) {
    const char c = env_name[i];
    if (std::islower(static_cast<unsigned char>(c))) return "";  // M_ names are upper-case
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

std::string EnvNameForKey(const std::string& key) {
  std::string name = "M_";
  for (char c : key) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::optional<std::string> ContainerOverrides::Value(const std::string& key) const {
  std::optional<std::string> env_value, arg_value;
  for (const Override& o : overrides) {
    if (o.key != key) continue;
    (o.location == OverrideLocation::kEnv ? env_value : arg_value) = o.value;
  }
  return arg_value ? arg_value : env_value;
}

bool ContainerOverrides::HasKey(const std::string& key) const {
  return std::any_of(overrides.begin(), overrides.end(),
                     [&](const Override& o) { return o.key == key; });
}

ContainerOverrides ScanContainer(const nlohmann::json& container) {
  ContainerOverrides out;
  if (!container.is_object()) return out;

  // argv = command ++ args, remembering where each element lives.
  struct Element {
    std::string text, pointer;
  };
  std::vector<Element> argv;
  for (const char* field : {"command", "args"}) {
    auto it = container.find(field);
    if (it == container.end() || !it->is_array()) continue;
    for (size_t i = 0; i < it->size(); ++i) {
      if ((*it)[i].is_string())
        argv.push_back({(*it)[i].get<std::string>(), "/" + std::string(field) + "/" + std::to_string(i)});
    }
  }
  bool next_is_script = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const Element& e = argv[i];
    out.invokes_maxtext = out.invokes_maxtext || MentionsMaxText(e.text);
    if (next_is_script) {
      next_is_script = false;
      for (const ShellWord& word : SplitShellWords(e.text, MayBeAssignmentOrConfig)) {
        Assignment a;
        if (ParseAssignment(word, a)) {
          AddAssignment(out, a, OverrideLocation::kScript, e.pointer);
        } else if (!out.config && IsConfigPath(word.text)) {
          out.config = ConfigArgument{word.text, e.pointer, word.raw_offset.back() + 1,
                                      OverrideLocation::kScript};
        }
      }
      continue;
    }
    if (i + 1 < argv.size() && IsShellDashC(e.text, argv[i + 1].text)) {
      next_is_script = true;
      ++i;  // skip the -c flag
      continue;
    }
    Assignment a;
    if (ParseArgAssignment(e.text, a)) {
      AddAssignment(out, a, OverrideLocation::kArg, e.pointer);
    } else if (!out.config && IsConfigPath(e.text)) {
      out.config = ConfigArgument{e.text, e.pointer, e.text.size(), OverrideLocation::kArg};
    }
  }

  auto env = container.find("env");
  if (env != container.end() && env->is_array()) {
    for (size_t i = 0; i < env->size(); ++i) {
      const nlohmann::json& var = (*env)[i];
      if (!var.is_object() || !var.contains("name") || !var["name"].is_string()) continue;
      const std::string key = MaxTextKeyFromEnv(var["name"].get<std::string>());
      if (key.empty() || !var.contains("value") || !var["value"].is_string()) continue;
      Override o;
      o.key = key;
      o.value = var["value"].get<std::string>();
      o.location = OverrideLocation::kEnv;
      o.pointer = "/env/" + std::to_string(i) + "/value";
      o.value_begin = 0;
      o.value_end = o.value.size();
      out.overrides.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace graintune::workload
