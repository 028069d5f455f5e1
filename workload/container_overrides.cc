#include "workload/container_overrides.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "workload/kubernetes_expansion.h"
#include "workload/shell_expansion.h"
#include "workload/script_constructs.h"
#include "workload/shell_invocation.h"
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

size_t NextOrder(const ContainerOverrides& out) { return out.overrides.size() + out.unknown.size(); }

// The keys whose -1 graintune rewrites: found wherever they are written, even where the reader
// cannot tell whether MaxText sees them.
bool IsWorkerCountKey(const std::string& key) {
  return key == "grain_worker_count" || key == "grain_worker_count_eval";
}

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
  // `first_start`: how many MaxText starts scripts before this one held.
  ScriptReader(const ContainerEnv& env, std::string pointer, size_t first_start, ContainerOverrides& out)
      : pointer_(std::move(pointer)), first_start_(first_start), out_(out) {
    for (const EnvVariable& v : env.variables) {
      if (v.value) variables_.SetFromEnv(v.name, *v.value);
      else variables_.SetUnknown(v.name);
    }
  }

  // The MaxText starts it found, in order: whether each runs train_compile.
  std::vector<bool> Read(const std::string& script) {
    const std::optional<UnevaluatedConstruct> construct = FirstUnevaluatedConstruct(script, SplitShellWords(script));
    const std::vector<ShellWord> words = SplitShellWords(script, MayMatter);
    FindCommands(words);
    for (const ShellWord& w : words) {
      if (construct && !unevaluated_ && w.command >= construct->command) Unevaluated(*construct);
      std::string name;
      size_t value_start = 0;
      if (w.assignment_position && ParseShellAssignment(w, name, value_start)) Assign(w, name, value_start);
      else ReadWord(w);
    }
    return start_compiles_only_;
  }

 private:
  // Which commands mention MaxText, and which of those start it (name a trainer or
  // train_compile): each of the latter is one start.
  void FindCommands(const std::vector<ShellWord>& words) {
    std::map<size_t, bool> starts;  // command -> runs train_compile
    for (const ShellWord& w : words) {
      if (MentionsMaxText(w.text) || NamesTrainer(w.text)) maxtext_commands_.insert(w.command);
      const bool compiles = w.text.find("train_compile") != std::string::npos;
      if (compiles || NamesTrainer(w.text)) starts[w.command] = starts[w.command] || compiles;
    }
    for (const auto& [command, compiles] : starts) {
      start_of_command_[command] = first_start_ + start_compiles_only_.size();
      start_compiles_only_.push_back(compiles);
    }
  }

  // From `construct` on (script_constructs.h), the reader no longer knows what a start sees: every
  // key of each later start is unknown, on its command line and in its environment, unless a
  // literal word of its own command sets it afterwards; every variable is unknown.
  void Unevaluated(const UnevaluatedConstruct& construct) {
    unevaluated_ = true;
    why_unevaluated_ = "graintune does not evaluate the script's " + construct.what +
                       ", which may set any key of the MaxText starts after it";
    for (const auto& [command, start] : start_of_command_) {
      if (command < construct.command) continue;
      out_.unknown.push_back({"", false, NextOrder(out_), why_unevaluated_, start});
      out_.unknown.push_back({"", true, NextOrder(out_), why_unevaluated_, start});
    }
    variables_.ForgetValues();
  }

  size_t StartOf(const ShellWord& w) const {
    auto it = start_of_command_.find(w.command);
    return it == start_of_command_.end() ? kEveryStart : it->second;
  }

  void Add(const Assignment& a, const ShellWord& w) {
    AddAssignment(out_, a, OverrideLocation::kScript, pointer_);
    out_.overrides.back().start = StartOf(w);
  }

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
    if (unevaluated_) v.known = false;  // it may be set on one path only
    if (!MaxTextKeyFromEnv(name).empty()) {
      if (unevaluated_ && !IsWorkerCountKey(MaxTextKeyFromEnv(name))) {
        out_.unknown.push_back({MaxTextKeyFromEnv(name), false, NextOrder(out_), why_unevaluated_, StartOf(w)});
      } else if (!e.known) {
        out_.unknown.push_back({MaxTextKeyFromEnv(name), false, NextOrder(out_), Why(w, e), StartOf(w)});
      } else {
        ShellWord whole{name + "=" + v.text, {}, {}, w.command, w.position, true};
        whole.raw_offset.assign(name.size() + 1, kNotInScript);
        whole.raw_offset.insert(whole.raw_offset.end(), v.raw_offset.begin(), v.raw_offset.end());
        Assignment a;
        if (ParseAssignment(whole, a)) Add(a, w);
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
      const bool keyed = ParseArgAssignment(LiteralPrefix(w), a);
      out_.unknown.push_back({keyed ? a.key : "", false, NextOrder(out_), Why(w, e), StartOf(w)});
      return;
    }
    for (const ShellWord& field : e.fields) {
      Assignment a;
      if (ParseAssignment(field, a)) {
        // After an unevaluated construct, a word outside MaxText's own command (a function's
        // argument) reaches MaxText only if that code passes it on.
        if (unevaluated_ && StartOf(w) == kEveryStart && !IsWorkerCountKey(a.key))
          out_.unknown.push_back({a.key, false, NextOrder(out_), why_unevaluated_, kEveryStart});
        else
          Add(a, w);
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
  size_t first_start_;
  ContainerOverrides& out_;
  ShellVariables variables_;
  std::set<size_t> maxtext_commands_;
  std::map<size_t, size_t> start_of_command_;
  std::vector<bool> start_compiles_only_;
  bool unevaluated_ = false;
  std::string why_unevaluated_;
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
      const std::vector<bool> starts = ScriptReader(*env, written.pointer, script_starts.size(), out).Read(e.text);
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
