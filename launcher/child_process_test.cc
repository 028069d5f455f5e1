// Waiting for a process's end: a child's, through its pidfd and without one, and a signal's.
#include "launcher/child_process.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace graintune::launcher {
namespace {

using std::chrono::milliseconds;

// A child that sleeps `seconds` (0: exits at once).
pid_t Child(int seconds) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (seconds > 0) sleep(static_cast<unsigned>(seconds));
    _exit(0);
  }
  return pid;
}

TEST(ChildProcessTest, WaitsForAChildsEndWithAndWithoutAPidFd) {
  for (const bool with_pidfd : {true, false}) {
    const pid_t quick = Child(0);
    const int pidfd = with_pidfd ? OpenPidFd(quick) : -1;
    EXPECT_EQ(WaitForEnd(pidfd, quick, milliseconds(10000)), Waited::kEnded) << with_pidfd;
    EXPECT_TRUE(HasEnded(quick));  // not reaped: it still answers
    if (pidfd >= 0) close(pidfd);
    waitpid(quick, nullptr, 0);

    const pid_t slow = Child(30);
    const int slow_fd = with_pidfd ? OpenPidFd(slow) : -1;
    EXPECT_EQ(WaitForEnd(slow_fd, slow, milliseconds(150)), Waited::kTimedOut) << with_pidfd;
    EXPECT_FALSE(HasEnded(slow));
    kill(slow, SIGKILL);
    waitpid(slow, nullptr, 0);
    if (slow_fd >= 0) close(slow_fd);
  }
}

TEST(ChildProcessTest, AProcessThatIsNoChildIsJudgedFromProc) {
  EXPECT_FALSE(HasEnded(getppid()));  // the test runner: alive, and not this process's child
  EXPECT_TRUE(HasEnded(0x3ffffff));   // no such process
}

TEST(ChildProcessTest, ASignalEndsTheWaitAndIsTaken) {
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &before);
  const int signal_fd = signalfd(-1, &usr1, SFD_CLOEXEC | SFD_NONBLOCK);
  ASSERT_GE(signal_fd, 0);
  const pid_t slow = Child(30);
  const int pidfd = OpenPidFd(slow);
  kill(getpid(), SIGUSR1);
  EXPECT_EQ(WaitForEnd(pidfd, slow, milliseconds(10000), signal_fd), Waited::kSignalled);
  EXPECT_FALSE(TakeSignal(signal_fd));  // taken once, not again
  kill(slow, SIGKILL);
  waitpid(slow, nullptr, 0);
  if (pidfd >= 0) close(pidfd);
  close(signal_fd);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

TEST(ChildProcessTest, ExecArgvEndsInNullAndPointsIntoTheStrings) {
  const std::vector<std::string> argv = {"python3", "-m", "maxtext"};
  const std::vector<char*> p = ExecArgv(argv);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], argv[0].c_str());
  EXPECT_STREQ(p[2], "maxtext");
  EXPECT_EQ(p[3], nullptr);
}

}  // namespace
}  // namespace graintune::launcher
