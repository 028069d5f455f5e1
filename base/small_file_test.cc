#include "base/small_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

namespace graintune {
namespace {

// A child's /proc entry opened while it runs and read after it was reaped: the read fails
// (ESRCH). ReadUpTo answers what it read (nothing); libstdc++'s filebuf throws there instead.
TEST(SmallFileTest, AProcEntryOfAProcessThatExitedReadsAsEmptyWithoutThrowing) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const std::string path = "/proc/" + std::to_string(child) + "/cmdline";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::ifstream stream(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(stream.is_open());
  kill(child, SIGKILL);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(ReadUpTo(fd, 1 << 20), "");
  ::close(fd);
  // What the exporter did before, for the record: the same read through an istreambuf_iterator.
  EXPECT_THROW(std::string((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>()),
               std::ios_base::failure);
}

TEST(SmallFileTest, ReadsAWholeFileUpToItsBoundAndNothingForAMissingOne) {
  const std::string path = ::testing::TempDir() + "/small_file_test.txt";
  std::ofstream(path) << std::string(10000, 'x');
  EXPECT_EQ(ReadSmallFile(path).size(), 10000u);
  EXPECT_EQ(ReadSmallFile(path, 4097).size(), 4097u);
  EXPECT_EQ(ReadSmallFile(path + ".missing"), "");
}

}  // namespace
}  // namespace graintune
