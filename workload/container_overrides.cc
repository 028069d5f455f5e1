#include "workload/container_overrides.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "workload/shell_expansion.h"
#include "workload/shell_words.h"

namespace graintune::workload {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsConfigPath(const std::string& word) {
  return (EndsWith(word, ".yml") || EndsWith(word, ".yaml")) && word.find('=') == std::string::npos;
}

// The script words ScanContainer looks at: assignments, expansions, config paths and the words
// that name MaxText (which make their command a MaxText command).
bool MayMatter(std::string_view word) {
  return word.find_first_of("=$`") != std::string_view::npos || word.ends_with(".yml") ||
         word.ends_with(".yaml") || word.find("train") != std::string_view::npos ||
         word.find("axText") != std::string_view::npos || word.find("maxtext") != std::string_view::npos;
}

bool MentionsMaxText(const std::string& text) {
  return text.find("MaxText") != std::string::npos || text.find("maxtext") != std::string::npos ||
         text.find("train.py") != std::string::npos;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` names a MaxText trainer module or script: `<pkg>.train` (MaxText.train,
// maxtext.trainers.pre_train.train) ending there, or a train.py path. train_compile is not one.
bool NamesTrainer(std::string_view text) {
  for (size_t at = text.find("train"); at != std::string_view::npos; at = text.find("train", at + 1)) {
    const size_t end = at + 5;
    const bool word_start = at == 0 || !IsIdentifierChar(text[at - 1]) || text[at - 1] == '_';
    if (!word_start && text[at - 1] != '.') continue;
    if (text.substr(end).starts_with(".py")) return true;
    if (at > 0 && text[at - 1] == '.' && (end == text.size() || !IsIdentifierChar(text[end])))
      return true;
  }
  return false;
}

// A shell invoked with -c: the following argv element is a script.
bool IsShellDashC(const std::string& shell, const std::string& flag) {
  const std::string base = shell.substr(shell.find_last_of('/') + 1);
  const bool is_shell = base == "bash" || base == "sh" || base == "dash" || base == "zsh";
  return is_shell && flag.size() >= 2 && flag[0] == '-' && flag.back() == 'c' &&
         flag.find_first_not_of("-abcefhkmnptuvxBCEHPT") == std::string::npos;
}

size_t NextOrder(const ContainerOverrides& out) { return out.overrides.size() + out.unknown.size(); }

void AddAssignment(ContainerOverrides& out, const Assignment& a, OverrideLocation location,
                   const std::string& pointer) {
  Override o;
  o.order = NextOrder(out);
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

KeyState ContainerOverrides::Lookup(const std::string& key) const {
  // The last word (highest order) that sets `key` at each level: argv, then env.
  for (const bool env : {false, true}) {
    const Override* set = nullptr;
    const UnknownKey* unknown_key = nullptr;
    for (const Override& o : overrides)
      if (o.key == key && (o.location == OverrideLocation::kEnv) == env) set = &o;
    for (const UnknownKey& u : unknown)
      if ((u.key == key || u.key.empty()) && u.env == env) unknown_key = &u;
    if (unknown_key && (!set || unknown_key->order > set->order))
      return {KeyState::Kind::kUnknown, "", unknown_key->why};
    if (set) return {KeyState::Kind::kSet, set->value, ""};
  }
  return {};
}

namespace {

// Reads one `bash -c` script: its variables, then each word as bash expands it.
class ScriptReader {
 public:
  ScriptReader(const ContainerEnv& env, std::string pointer, ContainerOverrides& out)
      : pointer_(std::move(pointer)), out_(out) {
    for (const EnvVariable& v : env.variables) {
      if (v.value) variables_.SetFromEnv(v.name, *v.value);
      else variables_.SetUnknown(v.name);
    }
  }

  void Read(const std::string& script) {
    const std::vector<ShellWord> words = SplitShellWords(script, MayMatter);
    for (const ShellWord& w : words)
      if (MentionsMaxText(w.text) || NamesTrainer(w.text)) maxtext_commands_.insert(w.command);
    for (const ShellWord& w : words) {
      std::string name;
      size_t value_start = 0;
      if (w.assignment_position && ParseShellAssignment(w, name, value_start)) Assign(w, name, value_start);
      else ReadWord(w);
    }
  }

 private:
  // NAME=value: a variable for the words after it (an M_ name is also MaxText's env).
  void Assign(const ShellWord& w, const std::string& name, size_t value_start) {
    ShellWord value;
    value.text = w.text.substr(value_start);
    value.raw_offset.assign(w.raw_offset.begin() + static_cast<std::ptrdiff_t>(value_start), w.raw_offset.end());
    value.quoting = w.quoting.substr(value_start);
    const ExpandedWord e = ExpandWord(value, variables_, /*split=*/false);
    ShellValue v;
    v.known = e.known;
    for (const ShellWord& f : e.fields) {
      v.text += f.text;
      v.raw_offset.insert(v.raw_offset.end(), f.raw_offset.begin(), f.raw_offset.end());
    }
    if (!MaxTextKeyFromEnv(name).empty()) {
      if (!e.known) {
        out_.unknown.push_back({MaxTextKeyFromEnv(name), false, NextOrder(out_), Why(w, e)});
      } else {
        ShellWord whole{name + "=" + v.text, {}, {}, w.command, w.position, true};
        whole.raw_offset.assign(name.size() + 1, kNotInScript);
        whole.raw_offset.insert(whole.raw_offset.end(), v.raw_offset.begin(), v.raw_offset.end());
        Assignment a;
        if (ParseAssignment(whole, a)) AddAssignment(out_, a, OverrideLocation::kScript, pointer_);
      }
    }
    variables_.Set(name, std::move(v));
  }

  void ReadWord(const ShellWord& w) {
    const ExpandedWord e = ExpandWord(w, variables_);
    if (!e.known) {
      // The program a command runs ($PYTHON) carries no key; nor does a word of a command that
      // does not run MaxText.
      if (w.position == 0 || !maxtext_commands_.count(w.command)) return;
      Assignment a;
      ShellWord prefix;
      prefix.text = LiteralPrefix(w);
      prefix.raw_offset.assign(prefix.text.size(), 0);
      const bool keyed = ParseArgAssignment(prefix.text, a);
      out_.unknown.push_back({keyed ? a.key : "", false, NextOrder(out_), Why(w, e)});
      return;
    }
    for (const ShellWord& field : e.fields) {
      Assignment a;
      if (ParseAssignment(field, a)) {
        AddAssignment(out_, a, OverrideLocation::kScript, pointer_);
      } else if (!out_.config && IsConfigPath(field.text)) {
        out_.config = ConfigArgument{field.text, pointer_, w.raw_offset.back() + 1, OverrideLocation::kScript};
      }
    }
  }

  static std::string Why(const ShellWord& w, const ExpandedWord& e) {
    std::string word = w.text.size() > 80 ? w.text.substr(0, 77) + "..." : w.text;
    return "the script word " + word + " cannot be expanded (" + e.unknown_part + ")";
  }

  std::string pointer_;
  ContainerOverrides& out_;
  ShellVariables variables_;
  std::set<size_t> maxtext_commands_;
};

// MaxText's M_ variables in the container's environment.
void ReadEnvironment(const ContainerEnv& env, ContainerOverrides& out) {
  for (const EnvVariable& v : env.variables) {
    const std::string key = MaxTextKeyFromEnv(v.name);
    if (key.empty()) continue;
    if (!v.value) {
      out.unknown.push_back({key, true, NextOrder(out), v.name + " comes from " + v.source});
      continue;
    }
    Override o;
    o.key = key;
    o.value = *v.value;
    o.location = OverrideLocation::kEnv;
    o.pointer = v.pointer;
    o.value_begin = 0;
    o.value_end = o.value.size();
    o.replaceable = !v.pointer.empty();
    o.order = NextOrder(out);
    out.overrides.push_back(std::move(o));
  }
  if (env.may_set_any)
    out.unknown.push_back({"", true, NextOrder(out), env.may_set_any_why + " may set any M_ variable"});
}

}  // namespace

ContainerOverrides ScanContainer(const nlohmann::json& container, const ContainerEnv* env) {
  ContainerOverrides out;
  if (!container.is_object()) return out;
  ContainerEnv literal_env;
  if (!env) {
    literal_env = ResolveContainerEnv(container, "", nullptr, "");
    env = &literal_env;
  }

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
  bool mentions_compile = false, mentions_trainer = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const Element& e = argv[i];
    out.invokes_maxtext = out.invokes_maxtext || MentionsMaxText(e.text);
    mentions_compile = mentions_compile || e.text.find("train_compile") != std::string::npos;
    mentions_trainer = mentions_trainer || NamesTrainer(e.text);
    if (next_is_script) {
      next_is_script = false;
      ScriptReader(*env, e.pointer, out).Read(e.text);
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
  out.aot_compile_only = mentions_compile && !mentions_trainer;
  ReadEnvironment(*env, out);
  return out;
}

}  // namespace graintune::workload
