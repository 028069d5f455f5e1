#include "cli/command_line.h"

#include <gtest/gtest.h>

#include <sstream>

namespace graintune::cli {
namespace {

CommandSpec Spec() {
  CommandSpec spec;
  spec.name = "thing";
  spec.summary = "Does a thing.";
  spec.usage = "[-f] FILE...";
  spec.flags = {{"filename", 'f', "FILE", "", "a file"},
                {"count", 0, "N", "3", "how many"},
                {"dry", 0, "", "", "a boolean"},
                {"all", 'A', "", "", "a boolean with a short form"}};
  spec.max_positionals = 2;
  return spec;
}

TEST(CommandLineTest, ShortAndLongFormsMeanTheSame) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-o", "json", "-f", "a.yaml"},
        std::vector<std::string>{"-ojson", "-fa.yaml"},
        std::vector<std::string>{"-o=json", "-f=a.yaml"},
        std::vector<std::string>{"--output", "json", "--filename", "a.yaml"},
        std::vector<std::string>{"--output=json", "--filename=a.yaml"}}) {
    Result<CommandLine> line = ParseCommandLine(Spec(), args);
    ASSERT_TRUE(line.ok()) << line.error();
    EXPECT_EQ(line->output, OutputFormat::kJson);
    EXPECT_EQ(line->flags.All("filename"), std::vector<std::string>{"a.yaml"});
  }
}

TEST(CommandLineTest, AShortBooleanFlagTakesNoValue) {
  Result<CommandLine> line = ParseCommandLine(Spec(), {"-A", "llama"});
  ASSERT_TRUE(line.ok()) << line.error();
  EXPECT_TRUE(line->flags.Bool("all"));
  EXPECT_EQ(line->positionals, std::vector<std::string>{"llama"});
  EXPECT_FALSE(ParseCommandLine(Spec(), {"-Ayes"}).ok());
}

TEST(CommandLineTest, ValuesMayStartWithADashAndDashIsStdin) {
  Result<CommandLine> line = ParseCommandLine(Spec(), {"--count", "-1", "-", "-f", "-"});
  ASSERT_TRUE(line.ok()) << line.error();
  EXPECT_EQ(line->flags.Get("count"), "-1");
  EXPECT_EQ(line->positionals, std::vector<std::string>{"-"});
  EXPECT_EQ(line->flags.All("filename"), std::vector<std::string>{"-"});
}

TEST(CommandLineTest, NothingTypedIsIgnored) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"a", "b", "c"}, "unexpected argument 'c'"},
      {{"-x"}, "unknown flag -x"},
      {{"--colour", "red"}, "unknown flag --colour"},
      {{"-o", "xml"}, "--output must be one of text|json|yaml, got 'xml'"},
      {{"-o"}, "flag -o needs a value"},
      {{"--dry=maybe"}, "flag --dry takes no value"},
  };
  for (const Case& c : cases) {
    Result<CommandLine> line = ParseCommandLine(Spec(), c.args);
    ASSERT_FALSE(line.ok()) << c.message;
    EXPECT_NE(line.error().find(c.message), std::string::npos) << line.error();
  }
  CommandSpec text_only = Spec();
  text_only.outputs = {OutputFormat::kText, OutputFormat::kJson};
  Result<CommandLine> yaml = ParseCommandLine(text_only, {"-o", "yaml"});
  ASSERT_FALSE(yaml.ok());
  EXPECT_NE(yaml.error().find("one of text|json,"), std::string::npos) << yaml.error();
}

TEST(CommandLineTest, HelpWinsAndListsEveryFlagWithItsDefault) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"-h"},
        std::vector<std::string>{"--bogus", "-h"}}) {
    Result<CommandLine> line = ParseCommandLine(Spec(), args);
    ASSERT_TRUE(line.ok()) << line.error();
    EXPECT_TRUE(line->help);
  }
  const std::string help = HelpText(Spec());
  for (const char* part : {"usage: graintune thing [-f] FILE...", "-f, --filename FILE", "--count N",
                           "(default: 3)", "--dry", "-o, --output FORMAT", "text|json|yaml",
                           "-h, --help"})
    EXPECT_NE(help.find(part), std::string::npos) << part << "\n" << help;
}

TEST(CommandLineTest, UsageErrorsPointToHelp) {
  std::ostringstream out, err;
  EXPECT_EQ(HelpOrUsageError(Spec(), ParseCommandLine(Spec(), {"-x"}), out, err), 2);
  EXPECT_EQ(err.str(), "graintune thing: unknown flag -x\nSee 'graintune thing --help'.\n");
  EXPECT_EQ(HelpOrUsageError(Spec(), ParseCommandLine(Spec(), {"-h"}), out, err), 0);
  EXPECT_EQ(out.str(), HelpText(Spec()));
  EXPECT_EQ(HelpOrUsageError(Spec(), ParseCommandLine(Spec(), {"a"}), out, err), std::nullopt);
}

TEST(CommandLineTest, YamlAndJsonCarryTheSameValue) {
  const nlohmann::json value = {{"workers", 12}, {"ratio", 0.5}, {"ok", true},
                                {"warnings", {"a: b", "4"}}, {"none", nullptr}};
  std::ostringstream yaml, json;
  WriteStructured(value, OutputFormat::kYaml, yaml);
  WriteStructured(value, OutputFormat::kJson, json);
  EXPECT_EQ(nlohmann::json::parse(json.str()), value);
  for (const char* part : {"workers: 12", "ratio: 0.5", "ok: true", "\"a: b\"", "\"4\"", "none: ~"})
    EXPECT_NE(yaml.str().find(part), std::string::npos) << part << "\n" << yaml.str();
}

}  // namespace
}  // namespace graintune::cli
