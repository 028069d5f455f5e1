// Edit: one change graintune makes to a container so MaxText sees the chosen worker count.
//
// Site finders (site_finders.h) produce edits before the value is known; the planner fills in
// the value and applies them with ApplyEdit. Each edit touches only what it names: a byte range
// inside one string, a text inserted at one offset, one argv element inserted, or one env var
// appended.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace graintune::webhook {

struct Edit {
  enum class Op {
    kReplaceRange,  // replace bytes [begin, end) of the string at `pointer` with the value
    kInsertText,    // insert " key=value" at byte `begin` of the string at `pointer`
    kInsertArg,     // insert "key=value" as a new argv element after the one at `pointer`
    kAppendEnv,     // append env {name: M_KEY, value}
    kLeave,         // none: a -1 graintune found but cannot rewrite (`left_why`); MaxText picks
  };
  Op op = Op::kReplaceRange;
  std::string site;                  // where the -1 was found, for people: args, script, env, ...
  // The -1 is graintune.dev/worker-count on the workload, not in the container: objects made
  // from this template (a JobSet's child Jobs) must carry that annotation to be tuned.
  bool requested_by_annotation = false;
  std::string key;                   // grain_worker_count or grain_worker_count_eval
  std::string container_pointer;     // absolute JSON pointer of the container
  std::string container_name;
  std::string pointer;               // relative to the container
  size_t begin = 0, end = 0;
  std::string before;                // the text replaced ("-1"), for explain
  std::string left_why;              // kLeave: why graintune leaves it to MaxText
};

inline bool IsEvalKey(const std::string& key) { return key == "grain_worker_count_eval"; }

// An edit as applied: the absolute pointer of what changed and the value written.
struct AppliedEdit {
  Edit edit;
  std::string pointer;
  int value = 0;
};

// Applies `edits` (none of them kLeave) to `object`, which must hold what they were found in (the finders checked the
// types), `value_of` giving each edit's value: first the in-place edits, every string rebuilt
// once for all its edits (k edits of an n-byte script cost O(n + k), not O(n k)); then argv
// insertions (they shift later indices); then env appends. Returns the edits in the order
// applied.
std::vector<AppliedEdit> ApplyEdits(nlohmann::json& object, std::vector<Edit> edits,
                                    const std::function<int(const Edit&)>& value_of);

}  // namespace graintune::webhook
