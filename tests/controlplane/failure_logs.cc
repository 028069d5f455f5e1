#include "tests/controlplane/failure_logs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxBytesPerLog = 4u << 20;
constexpr int kTailLines = 15;

std::string SafeName(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == ' ' || c == ','; }, '_');
  return name.empty() ? "unnamed" : name.substr(0, 200);
}

bool IsLog(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.extension() == ".log" || name.ends_with(".termination-log") || name.ends_with(".jsonl");
}

// The last `max_bytes` of `from` into `to`.
void CopyTail(const fs::path& from, const fs::path& to, std::uintmax_t max_bytes) {
  std::ifstream in(from, std::ios::binary);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(from, ec);
  if (!ec && size > max_bytes) in.seekg(static_cast<std::streamoff>(size - max_bytes));
  fs::create_directories(to.parent_path(), ec);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
}

void PrintTail(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line.substr(0, 400));
    if (lines.size() > kTailLines) lines.erase(lines.begin());
  }
  if (lines.empty()) return;
  std::fprintf(stderr, "--- last lines of %s\n", file.c_str());
  for (const std::string& l : lines) std::fprintf(stderr, "    %s\n", l.c_str());
}

}  // namespace

std::string SaveLogsOfFailure(ControlPlane& cp, const std::string& name) {
  const fs::path source = cp.dir();
  const char* root = std::getenv("GRAINTUNE_TEST_LOG_DIR");
  fs::path kept = source;
  if (root != nullptr && *root != '\0') {
    kept = fs::path(root) / SafeName(name);
    std::error_code ec;
    fs::remove_all(kept, ec);
    int copied = 0;
    for (auto it = fs::recursive_directory_iterator(source, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      // Never through a mount or a link (a real node's pod folders): only plain files here.
      if (it->is_symlink()) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file() || !IsLog(it->path())) continue;
      CopyTail(it->path(), kept / fs::relative(it->path(), source), kMaxBytesPerLog);
      ++copied;
    }
    std::fprintf(stderr, "\n*** %s failed: %d log files of its control plane are in %s ***\n", name.c_str(),
                 copied, kept.c_str());
  } else {
    cp.KeepDir();
    std::fprintf(stderr, "\n*** %s failed: its control plane's folder is kept, logs and all: %s ***\n",
                 name.c_str(), kept.c_str());
  }
  for (const char* log : {"kube-apiserver.log", "operator.log"})
    if (fs::exists(source / log)) PrintTail(source / log);
  return kept.string();
}

}  // namespace graintune::testing
