#include "workload/yaml_json.h"

#include <gtest/gtest.h>

#include "workload/mounted_config.h"

namespace graintune::workload {
namespace {

TEST(YamlJsonTest, ScalarsKeepTheirYamlMeaning) {
  Result<std::vector<nlohmann::json>> docs =
      ParseYamlDocuments("a: 4\nb: \"4\"\nc: true\nd: ~\n---\n---\ne: [1.5, x]\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0]["a"], 4);
  EXPECT_EQ((*docs)[0]["b"], "4");
  EXPECT_EQ((*docs)[0]["c"], true);
  EXPECT_TRUE((*docs)[0]["d"].is_null());
  EXPECT_EQ((*docs)[1]["e"], nlohmann::json::parse(R"([1.5, "x"])"));
}

// A few hundred bytes whose aliases name billions of nodes: an error, not 891 MB and seconds.
TEST(YamlJsonTest, AliasExpansionIsBounded) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    yaml += "]\n";
  }
  ASSERT_LT(yaml.size(), 1000u);
  Result<std::vector<nlohmann::json>> docs = ParseYamlDocuments(yaml);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().find("more than 200000 nodes"), std::string::npos) << docs.error();
  // A few aliases, as real manifests use them, are fine.
  EXPECT_TRUE(ParseYamlDocuments("base: &b {cpu: 4}\nother: *b\n").ok());
}

TEST(YamlJsonTest, NestingIsBounded) {
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  EXPECT_FALSE(ParseYamlDocuments(deep).ok());
  const std::string fine = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(ParseYamlDocuments(fine).ok());
}

TEST(MountedConfigTest, AnOversizedConfigIsNotParsed) {
  const std::string big = "grain_worker_count: -1\n" + std::string(kMaxConfigBytes, '[');
  Result<ConfigValues> values = FlattenYamlScalars(big);
  ASSERT_FALSE(values.ok());
  EXPECT_NE(values.error().find("over the 256 KiB graintune reads"), std::string::npos) << values.error();
  EXPECT_EQ((*FlattenYamlScalars("grain_worker_count: -1\n")).at("grain_worker_count"), "-1");
}

// Inputs the fuzzer found: each gets an answer instead of ending or hanging the program.
TEST(YamlJsonTest, NumbersOutOfRangeStayText) {
  Result<std::vector<nlohmann::json>> docs = ParseYamlDocuments("x: 1e999\ny: -1e999\nz: 1e-999\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  EXPECT_EQ((*docs)[0]["x"], "1e999");  // std::stod threw out_of_range here
  EXPECT_EQ((*docs)[0]["y"], "-1e999");
  EXPECT_TRUE((*docs)[0]["z"].is_string() || (*docs)[0]["z"] == 0.0);
}

TEST(YamlJsonTest, AVeryLongNumberIsReadInOnePass) {
  // 40,000 digits: the std::regex match recursed once per character and overflowed the stack.
  Result<std::vector<nlohmann::json>> docs = ParseYamlDocuments("x: " + std::string(40000, '7') + "\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  EXPECT_EQ((*docs)[0]["x"], std::string(40000, '7'));  // beyond double: kept as text
  Result<std::vector<nlohmann::json>> shorter = ParseYamlDocuments("x: +12\ny: .5\nz: 1.\nw: 1e3\nv: 1e\nu: .\n");
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ((*shorter)[0]["x"], 12);
  EXPECT_EQ((*shorter)[0]["y"], 0.5);
  EXPECT_EQ((*shorter)[0]["z"], 1.0);
  EXPECT_EQ((*shorter)[0]["w"], 1000.0);
  EXPECT_EQ((*shorter)[0]["v"], "1e");
  EXPECT_EQ((*shorter)[0]["u"], ".");
}

TEST(YamlJsonTest, AStreamOfEndlessDocumentsIsAnError) {
  // Six bytes on which yaml-cpp 0.7's LoadAll never returns (an endless run of documents).
  Result<std::vector<nlohmann::json>> docs = ParseYamlDocuments("! x\n? ");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().find("documents"), std::string::npos) << docs.error();
}

}  // namespace
}  // namespace graintune::workload
