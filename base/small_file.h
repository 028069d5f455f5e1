// Reading a small file whole, where it may vanish while it is read: a /proc entry of a process
// that exits between the open and the read answers ESRCH, and libstdc++'s filebuf throws on a
// failed read (std::istreambuf_iterator does not catch it), which ended graintune-exporter with
// std::terminate. These never throw: an error ends the read, and what was read so far is kept.
#pragma once

#include <cstddef>
#include <string>

namespace graintune {

// What `fd` holds from its offset on, at most `max_bytes`; stops at the end, at `max_bytes` or at
// the first error (EINTR is retried).
std::string ReadUpTo(int fd, size_t max_bytes);

// The file at `path`, at most `max_bytes`; "" when it cannot be opened.
std::string ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace graintune
