#include "base/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace graintune {

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  // Per process, so two writers of one path never share a temporary.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  std::FILE* out = std::fopen(temporary.c_str(), "wb");
  if (!out) return Status::Error("cannot write '" + temporary + "': " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
  const int write_errno = errno;
  if (std::fclose(out) != 0 || !written) {
    std::remove(temporary.c_str());
    return Status::Error("cannot write '" + temporary + "': " + std::strerror(written ? errno : write_errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(temporary.c_str());
    return Status::Error("cannot replace '" + path + "': " + std::strerror(rename_errno));
  }
  return Status::Ok();
}

}  // namespace graintune
