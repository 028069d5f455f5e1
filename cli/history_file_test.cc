#include "cli/history_file.h"

#include <gtest/gtest.h>

namespace graintune::cli {
namespace {

constexpr double kTokensPerStep = 8 * 2048;

TEST(HistoryFileTest, SummarisesEachAttemptInOrder) {
  Result<std::vector<Trial>> trials = ParseHistory(
      R"([{"workers": 1, "step_seconds": [9, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]},
          {"workers": 3, "oom_killed": true},
          {"workers": 2, "step_seconds": [5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
           "warmup_steps": 1, "worker_memory_bytes": 1e9}])",
      kTokensPerStep);
  ASSERT_TRUE(trials.ok()) << trials.error();
  ASSERT_EQ(trials->size(), 3u);
  EXPECT_EQ((*trials)[0].attempt, 0);
  EXPECT_EQ((*trials)[0].workers, 1);
  EXPECT_DOUBLE_EQ((*trials)[0].step_seconds_mean, 2.0);
  EXPECT_DOUBLE_EQ((*trials)[0].tokens_per_second_per_host, kTokensPerStep / 2.0);
  EXPECT_TRUE((*trials)[1].oom_killed);
  EXPECT_EQ((*trials)[1].workers, 3);
  EXPECT_EQ((*trials)[2].attempt, 2);
  EXPECT_DOUBLE_EQ((*trials)[2].step_seconds_mean, 1.0);
  EXPECT_DOUBLE_EQ((*trials)[2].worker_memory_bytes, 1e9);
}

TEST(HistoryFileTest, MalformedInputsNameTheProblem) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"{", "not valid JSON"},
      {R"({"workers": 1})", "must be a JSON array"},
      {R"([7])", "attempt 0: must be an object"},
      {R"([{"workers": 0, "step_seconds": []}])", "\"workers\" must be an integer in [1, 4096]"},
      {R"([{"workers": "4"}])", "\"workers\" must be an integer"},
      {R"([{"workers": 4}])", "\"step_seconds\" must be an array"},
      {R"([{"workers": 4, "step_seconds": [1, "x"]}])", "numbers only"},
      {R"([{"workers": 4, "step_seconds": [1, 1, 1]}])", "attempt 0: "},  // too few steps
      {R"([{"workers": 4, "oom_killed": "yes"}])", "\"oom_killed\" must be true or false"},
      {R"([{"workers": 4, "oom_killed": true, "warmup_steps": -1}])", "\"warmup_steps\""},
      {R"([{"workers": 4, "oom_killed": true, "worker_memory_bytes": -5}])", "worker_memory_bytes"},
  };
  for (const Case& c : cases) {
    Result<std::vector<Trial>> trials = ParseHistory(c.text, kTokensPerStep);
    ASSERT_FALSE(trials.ok()) << c.text;
    EXPECT_NE(trials.error().find(c.message), std::string::npos) << c.text << " -> " << trials.error();
  }
}

TEST(HistoryFileTest, MissingFileIsAnError) {
  Result<std::vector<Trial>> trials = ReadHistoryFile("/nonexistent/history.json", kTokensPerStep);
  ASSERT_FALSE(trials.ok());
  EXPECT_NE(trials.error().find("cannot read /nonexistent/history.json"), std::string::npos);
}

}  // namespace
}  // namespace graintune::cli
