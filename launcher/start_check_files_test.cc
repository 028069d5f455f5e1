#include "launcher/start_check_files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace graintune::launcher {
namespace {

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(StartCheckFiles, InstallWritesTheCheckAndItsHookAsTheSourcesSayThem) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "start-check-install" / "python";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(InstallStartCheck(dir.string()).ok());
  const std::string hook = ReadAll(dir / "sitecustomize.py");
  const std::string check = ReadAll(dir / "graintune_start_check.py");
  EXPECT_NE(hook.find("graintune_start_check.run(settings)"), std::string::npos);
  EXPECT_NE(check.find("def decide("), std::string::npos);
  EXPECT_EQ(hook, ReadAll(std::filesystem::path(GRAINTUNE_LAUNCHER_PYTHON_DIR) / "sitecustomize.py"));
  EXPECT_EQ(check, ReadAll(std::filesystem::path(GRAINTUNE_LAUNCHER_PYTHON_DIR) / "graintune_start_check.py"));
  // Installed twice (a restarted init container): the same files.
  ASSERT_TRUE(InstallStartCheck(dir.string()).ok());
  EXPECT_EQ(ReadAll(dir / "sitecustomize.py"), hook);
}

TEST(StartCheckFiles, InstallIntoAFolderThatCannotBeMadeIsAnError) {
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "start-check-not-a-folder";
  std::ofstream(file) << "x";
  const Status s = InstallStartCheck((file / "python").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("start-check-not-a-folder"), std::string::npos) << s.message();
}

TEST(StartCheckFiles, TheTrainersOwnPythonPathStaysAfterTheChecksFolder) {
  const StartCheckSettings settings{.python_dir = "/graintune-launcher/python", .report_file = "/m/start-check.json",
                                    .timeout_seconds = 90, .admission_value = 13};
  auto env = StartCheckEnv(settings, std::string("/app/src:/deps"));
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0], std::make_pair(std::string("PYTHONPATH"), std::string("/graintune-launcher/python:/app/src:/deps")));
  EXPECT_EQ(env[1].first, "GRAINTUNE_START_CHECK");
  const nlohmann::json check = nlohmann::json::parse(env[1].second);
  EXPECT_EQ(check, (nlohmann::json{{"report", "/m/start-check.json"}, {"timeout_seconds", 90}, {"admission_value", 13}}));
  EXPECT_EQ(StartCheckEnv(settings, std::nullopt)[0].second, "/graintune-launcher/python");
  EXPECT_EQ(StartCheckEnv(settings, std::string())[0].second, "/graintune-launcher/python");
  const StartCheckSettings no_value{.python_dir = "/p", .report_file = "/r"};
  EXPECT_FALSE(nlohmann::json::parse(StartCheckEnv(no_value, std::nullopt)[1].second).contains("admission_value"));
  EXPECT_FALSE(nlohmann::json::parse(StartCheckEnv(no_value, std::nullopt)[1].second).contains("fill_value"));
}

TEST(StartCheckFiles, AFillValueReachesTheCheck) {
  const StartCheckSettings settings{.python_dir = "/p", .report_file = "/r", .admission_value = 9, .fill_value = 9};
  const nlohmann::json check = nlohmann::json::parse(StartCheckEnv(settings, std::nullopt)[1].second);
  EXPECT_EQ(check.value("fill_value", 0), 9);
}

}  // namespace
}  // namespace graintune::launcher
