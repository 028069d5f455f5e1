#include "workload/shell_words.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace graintune::workload {
namespace {

std::vector<std::string> Texts(const std::string& script) {
  std::vector<std::string> out;
  for (const ShellWord& w : SplitShellWords(script)) out.push_back(w.text);
  return out;
}

TEST(ShellWordsTest, SplitsLikeAShell) {
  EXPECT_EQ(Texts("echo a && python3 -m MaxText.train cfg.yml x=1;y=2\nz='a b'"),
            (std::vector<std::string>{"echo", "a", "python3", "-m", "MaxText.train", "cfg.yml",
                                      "x=1", "y=2", "z=a b"}));
  EXPECT_EQ(Texts("a \"b c\" d\\ e # comment\nf"),
            (std::vector<std::string>{"a", "b c", "d e", "f"}));
  EXPECT_EQ(Texts("x=$(date +%s) y=${HOME}/a"),
            (std::vector<std::string>{"x=$(date +%s)", "y=${HOME}/a"}));
  EXPECT_EQ(Texts("a \\\n b"), (std::vector<std::string>{"a", "b"}));
}

TEST(ShellWordsTest, HashAndDollarInsideWordsAreLiteral) {
  EXPECT_EQ(Texts("a#b c$d $ e #f\ng"), (std::vector<std::string>{"a#b", "c$d", "$", "e", "g"}));
  EXPECT_EQ(Texts("x=1$'y' \"p\"q"), (std::vector<std::string>{"x=1$y", "pq"}));
}

// Every character of every word sits at its offset in the raw script, offsets increasing.
TEST(ShellWordsTest, EveryOffsetPointsAtItsCharacter) {
  const std::string script =
      "echo XPK Start: $(date);\n_sigterm() (kill -SIGTERM $! 2>/dev/null;);\ntrap _sigterm SIGTERM;\n"
      "(export TPU_STDERR_LOG_LEVEL=0 && python3 -m MaxText.train MaxText/configs/base.yml "
      "run_name=\"llama 3\" model_name='llama3-8b' a\\ b=c#d grain_worker_count=-1 "
      "x=\"q\\\"z\" ${HOME}/p) & PID=$!;\nwait $PID; # done";
  for (const ShellWord& w : SplitShellWords(script)) {
    ASSERT_EQ(w.text.size(), w.raw_offset.size()) << w.text;
    for (size_t i = 0; i < w.text.size(); ++i) {
      EXPECT_EQ(script[w.raw_offset[i]], w.text[i]) << w.text << " at " << i;
      if (i > 0) {
        EXPECT_GT(w.raw_offset[i], w.raw_offset[i - 1]) << w.text;
      }
    }
  }
}

TEST(ShellWordsTest, AssignmentOffsetsPointIntoTheRawScript) {
  const std::string script = "run 'grain_worker_count=-1' grain_worker_count_eval=\"-1\" k=v";
  std::vector<ShellWord> words = SplitShellWords(script);
  Assignment a;
  ASSERT_TRUE(ParseAssignment(words[1], a));
  EXPECT_EQ(a.key, "grain_worker_count");
  EXPECT_EQ(script.substr(a.value_begin, a.value_end - a.value_begin), "-1");
  ASSERT_TRUE(ParseAssignment(words[2], a));
  EXPECT_EQ(a.key, "grain_worker_count_eval");
  EXPECT_EQ(script.substr(a.value_begin, a.value_end - a.value_begin), "-1");
  EXPECT_TRUE(a.contiguous);
}

TEST(ShellWordsTest, QuotesSplittingAValueAreNotContiguous) {
  const std::string script = "grain_worker_count=-'1'";
  Assignment a;
  ASSERT_TRUE(ParseAssignment(SplitShellWords(script)[0], a));
  EXPECT_EQ(a.value, "-1");
  EXPECT_FALSE(a.contiguous);
}

TEST(ShellWordsTest, NotAssignments) {
  Assignment a;
  EXPECT_FALSE(ParseArgAssignment("python3", a));
  EXPECT_FALSE(ParseArgAssignment("=1", a));
  EXPECT_FALSE(ParseArgAssignment("1x=2", a));
  EXPECT_TRUE(ParseArgAssignment("--steps=10", a));
  EXPECT_EQ(a.key, "steps");
  EXPECT_TRUE(ParseArgAssignment("run_name=", a));
  EXPECT_EQ(a.value, "");
}

TEST(ShellWordsTest, UnterminatedQuotesDoNotCrash) {
  EXPECT_EQ(Texts("a 'b c").size(), 2u);
  EXPECT_EQ(Texts("a \"b c").size(), 2u);
  EXPECT_EQ(Texts("x=$(echo").size(), 1u);
  EXPECT_TRUE(SplitShellWords("").empty());
}

}  // namespace
}  // namespace graintune::workload

namespace graintune::workload {
namespace {

// A filter drops whole words only; the kept ones keep their exact raw offsets.
TEST(ShellWordsTest, KeepFilterDropsWordsNotOffsets) {
  const std::string script = "echo start && python3 -m MaxText.train 'run_name=a b' grain_worker_count=-1";
  const std::vector<ShellWord> all = SplitShellWords(script);
  const std::vector<ShellWord> kept =
      SplitShellWords(script, [](std::string_view w) { return w.find('=') != std::string_view::npos; });
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].text, "run_name=a b");
  EXPECT_EQ(kept[1].text, "grain_worker_count=-1");
  for (const ShellWord& k : kept) {
    auto same = std::find_if(all.begin(), all.end(), [&](const ShellWord& a) { return a.text == k.text; });
    ASSERT_NE(same, all.end());
    EXPECT_EQ(same->raw_offset, k.raw_offset);
  }
  EXPECT_EQ(script.substr(kept[1].raw_offset.front(), kept[1].text.size()), "grain_worker_count=-1");
}

}  // namespace
}  // namespace graintune::workload
