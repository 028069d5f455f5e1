// Writing a file whole: the text goes to a temporary file beside it, which is flushed, closed and
// renamed over the path, so a reader (the exporter reading the launcher's result file, the
// webhook reading its certificate files) sees the old file or the new one, never half of one.
// Every step is checked: an error names the path and what failed, and the temporary is removed.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace graintune {

Status WriteFileAtomically(const std::string& path, std::string_view text);

}  // namespace graintune
