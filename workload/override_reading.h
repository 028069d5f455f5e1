// What ScanContainer's readers (workload/container_overrides.h: the argv reader there, the script
// reader of script_reader.h) share: which words may matter, which name MaxText or its trainer,
// and how an assignment becomes an Override. Internal to the workload library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "workload/container_overrides.h"
#include "workload/shell_expansion.h"

namespace graintune::workload::reading {

bool EndsWith(const std::string& s, const std::string& suffix);

// A config file's path: a word ending in .yml or .yaml that assigns nothing.
bool IsConfigPath(const std::string& word);

// The script words ScanContainer looks at: assignments, expansions, config paths and the words
// that name MaxText (which make their command a MaxText command).
bool MayMatter(std::string_view word);

bool MentionsMaxText(const std::string& text);

bool IsIdentifierChar(char c);

// Whether `text` names a MaxText trainer module or script: `<pkg>.train` (MaxText.train,
// maxtext.trainers.pre_train.train) ending there, or a train.py path. train_compile is not one.
bool NamesTrainer(std::string_view text);

// The order the next override or unknown key found gets.
size_t NextOrder(const ContainerOverrides& out);

// The keys whose -1 graintune rewrites: found wherever they are written, even where the reader
// cannot tell whether MaxText sees them.
bool IsWorkerCountKey(const std::string& key);

// `a` as an override at `location` (`pointer`), its key the MaxText key an M_ name stands for.
void AddAssignment(ContainerOverrides& out, const Assignment& a, OverrideLocation location,
                   const std::string& pointer);

}  // namespace graintune::workload::reading
