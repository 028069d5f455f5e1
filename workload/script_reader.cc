#include "workload/script_reader.h"

#include <map>
#include <optional>
#include <set>

#include "workload/override_reading.h"
#include "workload/script_constructs.h"
#include "workload/shell_expansion.h"
#include "workload/shell_words.h"

namespace graintune::workload {
namespace {

using namespace reading;  // override_reading.h

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

}  // namespace

std::vector<bool> ReadScript(const ContainerEnv& env, const std::string& pointer, size_t first_start,
                             const std::string& script, ContainerOverrides& out) {
  return ScriptReader(env, pointer, first_start, out).Read(script);
}

}  // namespace graintune::workload
