#include "launcher/lap_process.h"

#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>

namespace graintune::launcher {
namespace {

using std::chrono::seconds;

// Whether `pid` is a live process (a zombie waiting for its new parent to reap it is not).
bool Running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' &&
         text[paren + 2] != 'X';
}

LapOutcome Sh(const std::string& script, seconds timeout = seconds(30)) {
  return RunLap({"/bin/sh", "-c", script}, {}, timeout, seconds(1));
}

TEST(RunLapTest, ACompletedLap) {
  const LapOutcome outcome = Sh("exit 0");
  EXPECT_TRUE(outcome.completed());
  EXPECT_EQ(outcome.Describe(), "completed");
}

// The pod told to stop during the lap: the launcher's SIGTERM reaches the lap's processes at
// once, the outcome says so, and the launcher's signal mask is as it was.
TEST(RunLapTest, ASigtermToTheLauncherStopsTheLapsGroupAndSaysSo) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "lap-sigterm";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string started = (dir / "started").string(), got = (dir / "got-term").string();
  const pthread_t launcher = pthread_self();
  std::jthread pod([&](std::stop_token stop) {
    while (!stop.stop_requested() && !std::filesystem::exists(started)) std::this_thread::yield();
    if (!stop.stop_requested()) pthread_kill(launcher, SIGTERM);  // to this thread, which blocks it
  });
  const LapOutcome outcome = Sh("trap 'echo term > " + got + "; exit 0' TERM; touch " + started +
                                "; while :; do sleep 0.05; done");
  pod.request_stop();
  pod.join();
  EXPECT_EQ(outcome.kind, LapOutcome::Kind::kStopped) << outcome.Describe();
  EXPECT_FALSE(outcome.completed());
  EXPECT_NE(outcome.Describe().find("SIGTERM"), std::string::npos) << outcome.Describe();
  std::ifstream term(got);
  std::string word;
  term >> word;
  EXPECT_EQ(word, "term") << "the lap's shell did not get the SIGTERM";
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGTERM), 0) << "SIGTERM is still blocked after the lap";
}

TEST(RunLapTest, AFailedExitAndAKillAreOutcomesNotErrors) {
  EXPECT_EQ(Sh("exit 3").Describe(), "exited 3");
  const LapOutcome killed = Sh("kill -9 $$");
  EXPECT_EQ(killed.kind, LapOutcome::Kind::kSignaled);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_FALSE(killed.completed());
}

TEST(RunLapTest, TheEnvironmentReachesTheLap) {
  setenv("M_METRICS_FILE", "/graintune-metrics/metrics.jsonl", 1);  // as the exporter sets it
  const LapOutcome outcome =
      RunLap({"/bin/sh", "-c", "test \"$M_STEPS\" = 40 && test -z \"${M_METRICS_FILE+set}\""},
             {{"M_STEPS", "40"}, {"M_METRICS_FILE", std::nullopt}}, seconds(30), seconds(1));
  unsetenv("M_METRICS_FILE");
  EXPECT_TRUE(outcome.completed()) << outcome.Describe();
}

TEST(RunLapTest, ACommandThatCannotStartSaysWhy) {
  const LapOutcome outcome = RunLap({"/nonexistent/python3"}, {}, seconds(30), seconds(1));
  EXPECT_EQ(outcome.kind, LapOutcome::Kind::kNotStarted);
  EXPECT_NE(outcome.Describe().find("/nonexistent/python3: No such file"), std::string::npos)
      << outcome.Describe();
}

// A lap that hangs is stopped at its deadline with every process it started, as Grain's
// workers would be: none is left running beside the trainer.
TEST(RunLapTest, AHungLapIsStoppedWithItsWholeGroup) {
  const std::string pids = testing::TempDir() + "/hung-lap-pids";
  std::filesystem::remove(pids);
  const LapOutcome outcome =
      Sh("trap '' TERM; sleep 600 & echo $! > " + pids + "; sleep 600", seconds(1));
  EXPECT_EQ(outcome.kind, LapOutcome::Kind::kTimedOut);
  EXPECT_NE(outcome.Describe().find("timed out"), std::string::npos);
  std::ifstream in(pids);
  pid_t worker = 0;
  ASSERT_TRUE(in >> worker);
  EXPECT_FALSE(Running(worker)) << "the lap's worker " << worker << " is still running";
}

// A lap called off (the operator answered "none": another host's lap failed) is stopped with
// every process it started as soon as the check names why, long before its timeout.
TEST(RunLapTest, ALapCalledOffIsStoppedWithItsWholeGroupAndSaysWhy) {
  const std::string pids = testing::TempDir() + "/called-off-pids";
  std::filesystem::remove(pids);
  int asked = 0;
  const LapOutcome outcome = RunLap(
      {"/bin/sh", "-c", "sleep 600 & echo $! > " + pids + "; sleep 600"}, {}, seconds(600), seconds(1),
      [&]() -> std::optional<std::string> {
        return ++asked >= 2 ? std::optional<std::string>("graintune's operator answered none") : std::nullopt;
      });
  EXPECT_EQ(outcome.kind, LapOutcome::Kind::kCalledOff);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(outcome.Describe().rfind("called off after ", 0), 0u) << outcome.Describe();
  EXPECT_NE(outcome.Describe().find(": graintune's operator answered none"), std::string::npos);
  EXPECT_LT(outcome.wall_seconds, 600);
  std::ifstream in(pids);
  pid_t worker = 0;
  ASSERT_TRUE(in >> worker);
  EXPECT_FALSE(Running(worker)) << "the lap's worker " << worker << " is still running";
}

TEST(RunLapTest, WorkersALapLeavesBehindAreStopped) {
  const std::string pids = testing::TempDir() + "/left-pids";
  std::filesystem::remove(pids);
  const LapOutcome outcome = Sh("sleep 600 & echo $! > " + pids + "; exit 0");
  EXPECT_TRUE(outcome.completed());
  std::ifstream in(pids);
  pid_t worker = 0;
  ASSERT_TRUE(in >> worker);
  EXPECT_FALSE(Running(worker)) << "the lap's worker " << worker << " is still running";
}

}  // namespace
}  // namespace graintune::launcher
