#include "base/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace graintune {
namespace {

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicFileTest, ReplacesTheFileWholeAndLeavesNoTemporary) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "atomic-file-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "result.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 1}\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "{\"b\": 2}\n").ok());
  EXPECT_EQ(Read(path), "{\"b\": 2}\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary left beside it
}

TEST(AtomicFileTest, AFolderThatDoesNotExistIsAnErrorNamingThePath) {
  const Status s = WriteFileAtomically("/nonexistent-folder-of-graintune/result.json", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-folder-of-graintune/result.json"), std::string::npos) << s.message();
}

TEST(AtomicFileTest, APathThatIsAFolderIsAnErrorAndKeepsTheFolder) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "atomic-file-folder";
  std::filesystem::create_directories(dir / "taken");
  const Status s = WriteFileAtomically((dir / "taken").string(), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot replace"), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_directory(dir / "taken"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // the temporary was removed
}

}  // namespace
}  // namespace graintune
