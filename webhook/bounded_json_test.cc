#include "webhook/bounded_json.h"

#include <gtest/gtest.h>

#include <string>

namespace graintune::webhook {
namespace {

using json = nlohmann::json;
using Verdict = BoundedJson::Verdict;

TEST(BoundedJsonTest, BuildsWhatJsonParseBuilds) {
  for (const char* text :
       {R"({"a": [1, -2, 3.5, "x", true, false, null, {}, []], "b": {"c": {"d": "\u00e9"}}})", "[]",
        "0", R"("s")", R"({"big": 18446744073709551615, "neg": -9223372036854775808, "f": 1e308})"}) {
    BoundedJson parsed = ParseBoundedJson(text, 512, 1000);
    ASSERT_EQ(parsed.verdict, Verdict::kOk) << text;
    EXPECT_EQ(parsed.value, json::parse(text)) << text;
  }
}

TEST(BoundedJsonTest, MalformedIsMalformed) {
  for (const char* text : {"", "{", R"({"a":})", "[1,]", "{} {}", "nul", R"({"a" 1})"}) {
    BoundedJson parsed = ParseBoundedJson(text, 512, 1000);
    EXPECT_EQ(parsed.verdict, Verdict::kMalformed) << text;
    EXPECT_TRUE(parsed.value.is_discarded()) << text;
  }
}

TEST(BoundedJsonTest, DepthIsCountedInContainers) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(ParseBoundedJson(nested(4), 4, 1000).verdict, Verdict::kOk);
  EXPECT_EQ(ParseBoundedJson(nested(5), 4, 1000).verdict, Verdict::kTooDeep);
  // Depth is nesting, not count: many shallow siblings are fine.
  EXPECT_EQ(ParseBoundedJson("[[],[],[],[],[],[]]", 2, 1000).verdict, Verdict::kOk);
  // Past the limit nothing is built, however deep the input goes.
  EXPECT_EQ(ParseBoundedJson(nested(200000), 512, 1'000'000).verdict, Verdict::kTooDeep);
}

TEST(BoundedJsonTest, ValuesAreCountedContainersIncluded) {
  // {"a": [1, 2]}: the object, the array, two numbers.
  EXPECT_EQ(ParseBoundedJson(R"({"a": [1, 2]})", 512, 4).verdict, Verdict::kOk);
  EXPECT_EQ(ParseBoundedJson(R"({"a": [1, 2]})", 512, 3).verdict, Verdict::kTooManyValues);
  // A malformed tail after the limit still reads as too many (the parse stopped there).
  EXPECT_EQ(ParseBoundedJson("[1, 2, 3, ", 512, 2).verdict, Verdict::kTooManyValues);
}

// Many sibling objects: each is kept once, in order (the callback parser this replaces scanned
// the parent on every object's end).
TEST(BoundedJsonTest, ManySiblingObjects) {
  std::string text = "[";
  for (int i = 0; i < 200000; ++i) text += R"({"i":)" + std::to_string(i) + "},";
  text += "{}]";
  BoundedJson parsed = ParseBoundedJson(text, 512, 1'000'000);
  ASSERT_EQ(parsed.verdict, Verdict::kOk);
  ASSERT_EQ(parsed.value.size(), 200001u);
  EXPECT_EQ(parsed.value[123456]["i"], 123456);
}

}  // namespace
}  // namespace graintune::webhook
