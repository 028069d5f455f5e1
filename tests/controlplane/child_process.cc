#include "tests/controlplane/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace graintune::testing {

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      exit_status_(other.exit_status_),
      name_(std::move(other.name_)),
      log_path_(std::move(other.log_path_)) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = other.pid_;
    exit_status_ = other.exit_status_;
    name_ = std::move(other.name_);
    log_path_ = std::move(other.log_path_);
    other.pid_ = -1;
  }
  return *this;
}

Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                         const std::string& log_path,
                                         const std::vector<std::string>& extra_env) {
  if (argv.empty()) return Status::Error("nothing to start");
  if (::access(argv[0].c_str(), X_OK) != 0)
    return Status::Error("cannot execute '" + argv[0] + "': " + std::strerror(errno));
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::Error("cannot open log '" + log_path + "'");
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // extra_env replaces a variable of the same name (getenv would find the inherited one first).
  auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  std::set<std::string> replaced;
  for (const std::string& e : extra_env) replaced.insert(name_of(e));
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e)
    if (!replaced.count(name_of(*e))) env_store.emplace_back(*e);
  for (const std::string& e : extra_env) env_store.push_back(e);
  std::vector<char*> env;
  for (std::string& e : env_store) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Status::Error("fork failed");
  }
  if (pid == 0) {
    // Dies with the harness, whatever kills the harness.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ChildProcess child;
  child.pid_ = pid;
  child.name_ = argv[0].substr(argv[0].rfind('/') + 1);
  child.log_path_ = log_path;
  return child;
}

bool ChildProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    if (r == pid_) exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::Stop(std::chrono::milliseconds grace) {
  const pid_t group = pid_;
  if (!Running()) return KillGroup(group);
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Running()) return KillGroup(group);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  const pid_t group = pid_;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_)
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  KillGroup(group);
}

void ChildProcess::KillGroup(pid_t group) {
  // What the child started in its own process group (a trainer's data workers) goes with it,
  // as a container's processes go with the container. ESRCH when nothing is left.
  if (group > 0) ::kill(-group, SIGKILL);
}

Result<int> FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return Status::Error("no free loopback port");
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

Result<std::string> RunShell(const std::string& command, const std::string& what) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return Status::Error("cannot run " + what);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  if (::pclose(pipe) != 0) return Status::Error(what + " failed: " + out);
  return out;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return out ? Status::Ok() : Status::Error("cannot write '" + path + "'");
}

std::string TailOfFile(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

}  // namespace graintune::testing
