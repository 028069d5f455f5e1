#include "tests/controlplane/process_tree.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <vector>

namespace graintune::testing {
namespace {

namespace fs = std::filesystem;

std::map<int, std::string> ProcStates() {  // pid -> stat's text after the command name
  std::map<int, std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(it->path() / "stat");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    if (close != std::string::npos && close + 2 <= text.size()) out[std::stoi(name)] = text.substr(close + 2);
  }
  return out;
}

std::string Cmdline(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

}  // namespace

std::map<int, ProcessSeen> Descendants(int pid) {
  std::map<int, std::vector<int>> children;
  for (const auto& [p, rest] : ProcStates()) {
    std::istringstream in(rest);
    std::string state;
    int ppid = 0;
    in >> state >> ppid;
    if (state != "Z") children[ppid].push_back(p);
  }
  std::map<int, ProcessSeen> out;
  std::vector<int> todo = {pid};
  while (!todo.empty()) {
    const int at = todo.back();
    todo.pop_back();
    for (int c : children[at]) {
      out[c] = {at, Cmdline(c)};
      todo.push_back(c);
    }
  }
  return out;
}

int TrainerIn(const std::map<int, ProcessSeen>& tree, const std::string& trainer_pattern) {
  for (const auto& [pid, p] : tree)  // in pid order
    if (p.cmdline.find(trainer_pattern) != std::string::npos && p.cmdline.rfind("bash", 0) != 0) return pid;
  return 0;
}

int GrainWorkers(const std::map<int, ProcessSeen>& tree, const std::string& trainer_pattern) {
  const int trainer = TrainerIn(tree, trainer_pattern);
  if (trainer == 0) return -1;
  std::set<int> below = {trainer};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, p] : tree)
      if (!below.count(pid) && below.count(p.ppid)) grew = below.insert(pid).second;
  }
  int workers = 0;
  for (int pid : below)
    if (pid != trainer && tree.at(pid).cmdline.find("multiprocessing.resource_tracker") == std::string::npos &&
        tree.at(pid).cmdline.find("multiprocessing.forkserver") == std::string::npos)
      ++workers;
  return workers;
}

bool ProcessEnded(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close == std::string::npos || text.compare(close + 1, 2, " Z") == 0;
}

}  // namespace graintune::testing
