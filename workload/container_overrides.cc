#include "workload/container_overrides.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "workload/kubernetes_expansion.h"
#include "workload/override_reading.h"
#include "workload/script_reader.h"
#include "workload/shell_expansion.h"
#include "workload/script_constructs.h"
#include "workload/shell_invocation.h"
#include "workload/shell_words.h"

namespace graintune::workload {

using namespace reading;  // override_reading.h

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

namespace {

// Maps [begin, end) of the kubelet-expanded text back to the text as written; false when those
// characters do not sit there side by side (some came from a variable).
bool MapToWritten(const KubernetesExpanded& e, size_t& begin, size_t& end) {
  if (!e.changed) return true;
  if (begin == end) {
    const size_t before = begin == 0 ? 0 : e.raw_offset[begin - 1];
    if (before == kNotInScript) return false;
    begin = end = begin == 0 ? 0 : before + 1;
    return true;
  }
  for (size_t i = begin; i < end; ++i)
    if (e.raw_offset[i] == kNotInScript || e.raw_offset[i] != e.raw_offset[begin] + (i - begin)) return false;
  const size_t length = end - begin;
  begin = e.raw_offset[begin];
  end = begin + length;
  return true;
}

// Moves what a reader found in `pointer`'s expanded text (from overrides[first] on) back to
// offsets in the text as written.
void MapBack(const KubernetesExpanded& e, const std::string& pointer, size_t first, ContainerOverrides& out) {
  if (!e.changed) return;
  for (size_t i = first; i < out.overrides.size(); ++i) {
    Override& o = out.overrides[i];
    if (o.pointer != pointer) continue;
    if (!MapToWritten(e, o.value_begin, o.value_end)) o.replaceable = false;
  }
  if (out.config && out.config->pointer == pointer) {
    size_t begin = out.config->end, end = out.config->end;
    if (MapToWritten(e, begin, end)) out.config->end = begin;
  }
}

// One exec-form argv element (not a script), as the kubelet expanded it.
void ReadArg(const KubernetesExpanded& e, const std::string& pointer, bool program, ContainerOverrides& out) {
  Assignment a;
  const bool keyed = ParseArgAssignment(e.text, a);
  if (!e.unknown_reference.empty()) {
    if (program) return;  // $(PYTHON) carries no key
    const std::string prefix = e.text.substr(0, e.text.find(e.unknown_reference));
    Assignment k;
    const bool prefixed = ParseArgAssignment(prefix, k);
    out.unknown.push_back({prefixed ? k.key : "", false, NextOrder(out),
                           "the argument " + e.text.substr(0, 80) + " refers to " + e.unknown_reference +
                               ", whose value graintune cannot see"});
    return;
  }
  if (keyed) {
    AddAssignment(out, a, OverrideLocation::kArg, pointer);
    if (!MapToWritten(e, out.overrides.back().value_begin, out.overrides.back().value_end))
      out.overrides.back().replaceable = false;
  } else if (!out.config && IsConfigPath(e.text)) {
    out.config = ConfigArgument{e.text, pointer, e.text.size(), OverrideLocation::kArg};
    MapBack(e, pointer, out.overrides.size(), out);
  }
}

// A word after a shell's command string: a positional parameter ($0, $1, ...), which MaxText
// sees only if the script passes it on ("$@" never holds $0). A worker count there is kept where
// it is written (rewriting it changes nothing MaxText may not see); any other key it sets is
// unknown, never read as set.
void ReadPositional(const KubernetesExpanded& e, const std::string& pointer, size_t parameter,
                    ContainerOverrides& out) {
  Assignment a;
  if (!ParseArgAssignment(e.text, a)) return;
  if (IsWorkerCountKey(a.key)) {
    ReadArg(e, pointer, false, out);
    return;
  }
  out.unknown.push_back({a.key, false, NextOrder(out),
                         "the argument " + e.text.substr(0, 80) + " is the script's $" + std::to_string(parameter) +
                             ": MaxText sees it only if the script passes it on"});
}

}  // namespace

ContainerOverrides ContainerOverrides::OfStart(size_t start) const {
  ContainerOverrides one = *this;
  auto other = [start](size_t s) { return s != kEveryStart && s != start; };
  std::erase_if(one.overrides, [&](const Override& o) { return other(o.start); });
  std::erase_if(one.unknown, [&](const UnknownKey& u) { return other(u.start); });
  one.starts = 1;
  if (start < start_compiles_only.size()) {
    one.aot_compile_only = start_compiles_only[start];
    one.start_compiles_only = {start_compiles_only[start]};
  }
  return one;
}

ContainerOverrides ScanContainer(const nlohmann::json& container, const ContainerEnv* env) {
  ContainerOverrides out;
  if (!container.is_object()) return out;
  ContainerEnv literal_env;
  if (!env) {
    literal_env = ResolveContainerEnv(container, "", nullptr, "");
    env = &literal_env;
  }
  const auto reference = [env](const std::string& name) { return env->Reference(name); };

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
  std::vector<KubernetesExpanded> expanded;
  std::vector<std::string> expanded_texts;  // what ParseShellInvocation reads
  for (const Element& written : argv) {
    expanded.push_back(ExpandKubernetesReferences(written.text, reference));
    expanded_texts.push_back(expanded.back().text);
  }
  // The first shell started with a command string (workload/shell_invocation.h), as it parses
  // its own options; the words after the script are its positional parameters.
  std::optional<ShellInvocation> shell;
  bool mentions_compile = false, mentions_trainer = false;
  std::vector<bool> script_starts;
  for (size_t i = 0; i < argv.size(); ++i) {
    const Element& written = argv[i];
    const KubernetesExpanded& e = expanded[i];
    out.invokes_maxtext = out.invokes_maxtext || MentionsMaxText(e.text);
    mentions_compile = mentions_compile || e.text.find("train_compile") != std::string::npos;
    mentions_trainer = mentions_trainer || NamesTrainer(e.text);
    if (shell && i == shell->script) {
      const size_t first = out.overrides.size();
      // An unknown $(NAME) stays in the script, where bash reads it as a command substitution.
      const std::vector<bool> starts = ReadScript(*env, written.pointer, script_starts.size(), e.text, out);
      script_starts.insert(script_starts.end(), starts.begin(), starts.end());
      MapBack(e, written.pointer, first, out);
      continue;
    }
    if (shell && i >= shell->positional_begin) {
      ReadPositional(e, written.pointer, i - shell->positional_begin, out);
      continue;
    }
    if (!shell && (shell = ParseShellInvocation(expanded_texts, i))) {
      i = shell->script - 1;  // the shell's options are no MaxText words
      continue;
    }
    ReadArg(e, written.pointer, i == 0, out);
  }
  out.aot_compile_only = mentions_compile && !mentions_trainer;
  if (script_starts.empty()) {
    out.start_compiles_only = {out.aot_compile_only};
  } else {
    out.starts = script_starts.size();
    out.start_compiles_only = std::move(script_starts);
  }
  ReadEnvironment(*env, out);
  return out;
}

}  // namespace graintune::workload
