#include "workload/shell_expansion.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

// The fields of the only word of `script`, expanded; {"?"} when it cannot be.
std::vector<std::string> Fields(const std::string& script, ShellVariables& vars) {
  const std::vector<ShellWord> words = SplitShellWords(script);
  EXPECT_EQ(words.size(), 1u) << script;
  const ExpandedWord e = ExpandWord(words.at(0), vars);
  if (!e.known) return {"?"};
  std::vector<std::string> out;
  for (const ShellWord& f : e.fields) out.push_back(f.text);
  return out;
}

using Strings = std::vector<std::string>;

TEST(ShellExpansionTest, UnquotedExpansionsSplitAndQuotedOnesDoNot) {
  ShellVariables vars;
  vars.SetFromEnv("ARGS", "dataset_type=grain  base_output_directory=gs://b/runs");
  EXPECT_EQ(Fields("$ARGS", vars), (Strings{"dataset_type=grain", "base_output_directory=gs://b/runs"}));
  EXPECT_EQ(Fields("\"$ARGS\"", vars), (Strings{"dataset_type=grain  base_output_directory=gs://b/runs"}));
  EXPECT_EQ(Fields("x=${ARGS}", vars), (Strings{"x=dataset_type=grain", "base_output_directory=gs://b/runs"}));
  EXPECT_EQ(Fields("'$ARGS'", vars), (Strings{"$ARGS"}));
  EXPECT_EQ(Fields("\\$ARGS", vars), (Strings{"$ARGS"}));
}

TEST(ShellExpansionTest, DefaultsApplyOnlyWhereBashAppliesThem) {
  ShellVariables vars;
  vars.SetFromEnv("CKPT", "False");
  vars.SetFromEnv("EMPTY", "");
  EXPECT_EQ(Fields("enable_checkpointing=${CKPT:-true}", vars), (Strings{"enable_checkpointing=False"}));
  EXPECT_EQ(Fields("a=${EMPTY:-true}", vars), (Strings{"a=true"}));
  EXPECT_EQ(Fields("a=${EMPTY-true}", vars), (Strings{"a="}));
  EXPECT_EQ(Fields("a=${EMPTY:+x}${CKPT:+y}", vars), (Strings{"a=y"}));
  EXPECT_EQ(Fields("a=${EMPTY:=\"q r\"}", vars), (Strings{"a=q", "r"}));
  EXPECT_EQ(Fields("b=$EMPTY", vars), (Strings{"b=q", "r"}));  // := assigned it
  EXPECT_EQ(Fields("\"b=$EMPTY\"", vars), (Strings{"b=q r"}));
  // A variable graintune cannot see may come from the image: its default is not known to apply.
  EXPECT_EQ(Fields("a=${UNSEEN:-true}", vars), (Strings{"?"}));
}

TEST(ShellExpansionTest, WhatBashWouldRunOrCannotBeSeenIsUnknown) {
  ShellVariables vars;
  vars.SetUnknown("SECRET");
  for (const char* word : {"run_name=$(date +%s)", "run_name=`date`", "$1", "$@", "${#X}",
                           "${X%.yml}", "$SECRET", "$RUN_ID", "a=$((1+2))"}) {
    EXPECT_EQ(Fields(word, vars), (Strings{"?"})) << word;
  }
  const std::vector<ShellWord> words = SplitShellWords("run_name=${RUN_ID}x");
  const ExpandedWord e = ExpandWord(words[0], vars);
  EXPECT_FALSE(e.known);
  EXPECT_EQ(e.unknown_part, "${RUN_ID}");
  EXPECT_EQ(LiteralPrefix(words[0]), "run_name=");
  // A lone `$`, or one before something that is no parameter, is literal.
  EXPECT_EQ(Fields("a$", vars), (Strings{"a$"}));
  EXPECT_EQ(Fields("a$/b", vars), (Strings{"a$/b"}));
}

TEST(ShellExpansionTest, CharactersFromTheScriptKeepTheirOffsets) {
  const std::string script = "A='x=1 y=2'; run $A";
  ShellVariables vars;
  const std::vector<ShellWord> words = SplitShellWords(script);
  ASSERT_EQ(words.size(), 3u);
  ShellValue a;
  a.text = "x=1 y=2";
  for (size_t i = 0; i < words[0].text.size(); ++i)
    if (i >= 2) a.raw_offset.push_back(words[0].raw_offset[i]);
  vars.Set("A", a);
  const ExpandedWord e = ExpandWord(words[2], vars);
  ASSERT_TRUE(e.known);
  ASSERT_EQ(e.fields.size(), 2u);
  EXPECT_EQ(script.substr(e.fields[1].raw_offset[0], 3), "y=2");
  vars.SetFromEnv("B", "z=3");
  const ExpandedWord from_env = ExpandWord(SplitShellWords("$B")[0], vars);
  EXPECT_EQ(from_env.fields.at(0).raw_offset.at(0), kNotInScript);
}

TEST(ShellExpansionTest, ExpansionIsBounded) {
  ShellVariables vars;
  vars.SetFromEnv("A", std::string(40 * 1024, 'a'));
  EXPECT_EQ(Fields("$A$A", vars), (Strings{"?"}));
  // Nested defaults stop at kMaxExpansionDepth.
  vars.SetFromEnv("E", "");
  EXPECT_EQ(Fields("${E:-${E:-${E:-${E:-${E:-${E:-x}}}}}}", vars), (Strings{"?"}));
  EXPECT_EQ(Fields("${E:-${E:-x}}", vars), (Strings{"x"}));
  // A malformed word (an unclosed brace) is unknown, never a crash.
  EXPECT_EQ(Fields("${A", vars), (Strings{"?"}));
}

}  // namespace
}  // namespace graintune::workload
