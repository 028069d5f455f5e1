#include "workload/override_reading.h"

#include <cctype>

namespace graintune::workload::reading {

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

}  // namespace graintune::workload::reading
