#include "workload/shell_invocation.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace graintune::workload {
namespace {

struct Case {
  std::vector<std::string> argv;
  std::optional<size_t> script;  // nullopt: no command string
};

// Each form checked against real bash: `bash <options> 'echo "$0|$1"' zero one` prints
// zero|one, so the command string is the word listed and $0 the one after it.
TEST(ShellInvocation, EveryOptionFormThatEndsInACommandString) {
  const std::vector<Case> cases = {
      {{"bash", "-c", "S"}, 2},
      {{"/bin/bash", "-lc", "S"}, 2},
      {{"bash", "-l", "-c", "S"}, 3},
      {{"bash", "-e", "-c", "S"}, 3},
      {{"bash", "-xeuc", "S", "zero"}, 2},
      {{"bash", "--login", "-c", "S"}, 3},
      {{"bash", "--noprofile", "--norc", "-c", "S"}, 4},
      {{"bash", "--rcfile", "/etc/x", "-c", "S"}, 4},
      {{"bash", "-o", "pipefail", "-c", "S"}, 4},
      {{"bash", "-eo", "pipefail", "-c", "S"}, 4},
      {{"bash", "+o", "posix", "-c", "S"}, 4},
      {{"bash", "-O", "extglob", "-c", "S"}, 4},
      {{"bash", "-c", "--", "S", "zero"}, 3},
      {{"bash", "-c", "-", "S"}, 3},
      {{"sh", "-ec", "S"}, 2},
      {{"/usr/bin/dash", "-c", "S"}, 2},
      {{"zsh", "-c", "S"}, 2},
      {{"bash", "run.sh", "-c"}, std::nullopt},
      {{"bash", "-l"}, std::nullopt},
      {{"bash", "-c"}, std::nullopt},
      {{"bash", "+c", "S"}, std::nullopt},
      {{"python3", "-c", "S"}, std::nullopt},
      {{"bash"}, std::nullopt},
  };
  for (const Case& c : cases) {
    const std::optional<ShellInvocation> shell = ParseShellInvocation(c.argv, 0);
    ASSERT_EQ(shell.has_value(), c.script.has_value()) << ::testing::PrintToString(c.argv);
    if (!shell) continue;
    EXPECT_EQ(shell->script, *c.script) << ::testing::PrintToString(c.argv);
    EXPECT_EQ(shell->positional_begin, *c.script + 1);
  }
}

std::string Quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Real bash is the judge: with the command string in the place the parser names, bash prints
// the word the parser says is $0.
TEST(ShellInvocation, BashAgreesOnTheScriptAndItsZerothParameter) {
  const std::vector<std::vector<std::string>> options = {
      {"-c"}, {"-lc"}, {"-l", "-c"}, {"-e", "-c"}, {"-xeuc"}, {"--login", "-c"}, {"--norc", "-c"},
      {"--rcfile", "/dev/null", "-c"}, {"-o", "pipefail", "-c"}, {"-eo", "pipefail", "-c"},
      {"+o", "posix", "-c"}, {"-O", "extglob", "-c"}, {"-c", "--"}, {"-c", "-"}};
  for (const std::vector<std::string>& opts : options) {
    std::vector<std::string> argv = {"bash"};
    argv.insert(argv.end(), opts.begin(), opts.end());
    argv.insert(argv.end(), {"printf %s \"$0\"", "zero-word", "one-word"});
    const std::optional<ShellInvocation> shell = ParseShellInvocation(argv, 0);
    ASSERT_TRUE(shell) << ::testing::PrintToString(argv);
    std::string line;
    for (const std::string& w : argv) line += Quoted(w) + " ";
    FILE* out = ::popen((line + "2>/dev/null").c_str(), "r");
    ASSERT_NE(out, nullptr);
    char buffer[256] = {};
    const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, out);
    ::pclose(out);
    EXPECT_EQ(argv[shell->script], "printf %s \"$0\"") << ::testing::PrintToString(argv);
    EXPECT_EQ(std::string(buffer, n), argv[shell->positional_begin]) << ::testing::PrintToString(argv);
  }
}

TEST(ShellInvocation, AShellLaterInTheArgv) {
  const std::vector<std::string> argv = {"tini", "--", "bash", "-lc", "S", "zero", "one"};
  EXPECT_FALSE(ParseShellInvocation(argv, 0));
  const std::optional<ShellInvocation> shell = ParseShellInvocation(argv, 2);
  ASSERT_TRUE(shell);
  EXPECT_EQ(shell->script, 4u);
  EXPECT_EQ(shell->positional_begin, 5u);
  EXPECT_FALSE(ParseShellInvocation(argv, 99));
}

}  // namespace
}  // namespace graintune::workload
