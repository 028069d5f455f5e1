// node-tool: the only program in the node tests' images (no shell, no busybox), linked
// statically so a one-layer image holding this file runs:
//   node-tool pause        the pod sandbox: sleeps until SIGTERM or SIGINT, reaping children
//   node-tool sleep SECS   sleeps, then exits 0 (0: forever)
//   node-tool hog MIB      touches MIB MiB, 1 MiB at a time, then sleeps; over a memory limit
//                          the kernel's OOM killer ends it (as PID 1 the container ends too)
//   node-tool listen PORT  answers every TCP connection on PORT with "node-tool\n" (a pod that
//                          is reached over its IP, as the operator reaches the exporter)
//   node-tool exit CODE    exits with CODE
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

volatile sig_atomic_t g_stop = 0;

void OnStop(int) { g_stop = 1; }
void OnChild(int) {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// As PID 1 a process ignores signals it has no handler for: SIGTERM would wait out the grace.
void StopOnTerm() {
  struct sigaction stop = {};
  stop.sa_handler = OnStop;
  ::sigaction(SIGTERM, &stop, nullptr);
  ::sigaction(SIGINT, &stop, nullptr);
}

int Pause() {
  StopOnTerm();
  struct sigaction child = {};
  child.sa_handler = OnChild;
  child.sa_flags = SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &child, nullptr);
  while (!g_stop) ::pause();
  return 0;
}

int Sleep(long seconds) {
  StopOnTerm();
  if (seconds <= 0)
    while (!g_stop) ::pause();
  while (seconds > 0 && !g_stop) seconds = ::sleep(static_cast<unsigned>(seconds));
  return 0;
}

int Hog(long mib) {
  constexpr size_t kMiB = 1 << 20;
  std::printf("node-tool: touching %ld MiB\n", mib);
  std::fflush(stdout);
  for (long i = 0; i < mib; ++i) {
    char* chunk = static_cast<char*>(std::malloc(kMiB));
    if (!chunk) return 3;
    std::memset(chunk, 1 + (i & 0x7f), kMiB);
  }
  std::printf("node-tool: holding %ld MiB\n", mib);
  std::fflush(stdout);
  return Sleep(0);
}

int Listen(long port) {
  StopOnTerm();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 16) != 0) {
    std::perror("node-tool listen");
    return 1;
  }
  std::printf("node-tool: listening on %ld\n", port);
  std::fflush(stdout);
  while (!g_stop) {
    const int client = ::accept(fd, nullptr, nullptr);
    if (client < 0) continue;
    const char kAnswer[] = "node-tool\n";
    if (::write(client, kAnswer, sizeof(kAnswer) - 1) < 0) std::perror("node-tool write");
    ::close(client);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const long value = argc > 2 ? std::atol(argv[2]) : 0;
  if (std::strcmp(mode, "pause") == 0) return Pause();
  if (std::strcmp(mode, "sleep") == 0) return Sleep(value);
  if (std::strcmp(mode, "hog") == 0) return Hog(value);
  if (std::strcmp(mode, "listen") == 0) return Listen(value);
  if (std::strcmp(mode, "exit") == 0) return static_cast<int>(value);
  std::fprintf(stderr, "usage: node-tool pause | sleep SECS | hog MIB | listen PORT | exit CODE\n");
  return 2;
}
