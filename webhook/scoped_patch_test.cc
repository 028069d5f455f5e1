#include "webhook/scoped_patch.h"

#include <gtest/gtest.h>

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

json Object() {
  return json::parse(R"({
    "kind": "Job",
    "spec": {"template": {"spec": {"containers": [
      {"name": "a", "args": ["x=1"]}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"},
      {"name": "f"}, {"name": "g"}, {"name": "h"}, {"name": "i"}, {"name": "j"},
      {"name": "k", "env": [{"name": "M_X", "value": "-1"}]}]}}},
    "weird": {"10": 1, "9": 1}
  })");
}

// Whatever order and overlap the planner reports its writes in, the patch is diff's patch.
TEST(ScopedPatchTest, EqualsTheFullDiffInItsOrder) {
  const json before = Object();
  json after = before;
  after["spec"]["template"]["spec"]["containers"][10]["env"][0]["value"] = "8";
  after["spec"]["template"]["spec"]["containers"][2]["args"] = json::array({"y=2"});
  after["spec"]["template"]["metadata"]["annotations"]["graintune.dev/worker-count"] = "8";  // new map
  after["metadata"] = {{"labels", {{"graintune.dev/managed", "true"}}}};                     // new map
  after["weird"]["10"] = 2;
  after["weird"]["9"] = 2;
  const std::vector<std::string> touched = {
      "/weird/9", "/spec/template/spec/containers/10", "/spec/template/metadata",
      "/spec/template/spec/containers/2", "/metadata", "/weird/10",
      "/spec/template/spec/containers/10/env"};  // inside containers/10: dropped
  EXPECT_EQ(ScopedPatch(before, after, touched), json::diff(before, after));
}

TEST(ScopedPatchTest, WidensToWhatExistsInBoth) {
  const json before = Object();
  json after = before;
  after["spec"]["template"]["metadata"] = {{"annotations", {{"k", "v"}}}};
  const auto covering = CoveringPointers(before, after, {"/spec/template/metadata/annotations"});
  ASSERT_EQ(covering.size(), 1u);
  EXPECT_EQ(covering[0].to_string(), "/spec/template/metadata");  // new: added whole
  EXPECT_EQ(ScopedPatch(before, after, {"/spec/template/metadata/annotations"}), json::diff(before, after));
}

// A new member sorts after the members both sides have, as diff emits it.
TEST(ScopedPatchTest, NewMembersComeAfterChangedOnes) {
  const json before = Object();
  json after = before;
  after["aaa"] = 1;                        // new, sorts first by key
  after["spec"]["template"]["spec"]["containers"][0]["args"][0] = "x=2";
  after["zzz"] = {{"k", "v"}};             // new
  EXPECT_EQ(ScopedPatch(before, after, {"/zzz/k", "/aaa", "/spec/template/spec/containers/0/args/0"}),
            json::diff(before, after));
}

TEST(ScopedPatchTest, AChangedTypeIsReplacedWhole) {
  json before = Object();
  before["spec"]["template"]["spec"]["containers"][0]["env"] = "oops";  // not an array
  json after = before;
  after["spec"]["template"]["spec"]["containers"][0]["env"] = json::array({{{"name", "M_X"}, {"value", "1"}}});
  EXPECT_EQ(ScopedPatch(before, after, {"/spec/template/spec/containers/0/env/0"}),
            json::diff(before, after));
}

// The contract: only touched subtrees are compared.
TEST(ScopedPatchTest, NothingOutsideTheTouchedSubtreesIsCompared) {
  const json before = Object();
  json after = before;
  after["kind"] = "Pod";
  EXPECT_EQ(ScopedPatch(before, after, {"/spec"}), json::array());
  EXPECT_EQ(ScopedPatch(before, after, {}), json::array());
  EXPECT_EQ(ScopedPatch(before, after, {"/kind"}), json::diff(before, after));
}

// The copy the planner keeps instead of the whole object yields the same patch, and holds the
// touched subtrees only.
TEST(CopyTouchedTest, GivesTheSamePatchAsTheWholeObject) {
  json before = Object();
  before["huge"] = json::array();
  for (int i = 0; i < 1000; ++i) before["huge"].push_back({{"i", i}});
  before["scalar_parent"] = "text";
  json after = before;
  after["spec"]["template"]["spec"]["containers"][10]["env"][0]["value"] = "8";    // in an array
  after["spec"]["template"]["metadata"] = {{"annotations", {{"k", "v"}}}};           // absent before
  after["spec"]["template"]["spec"]["volumes"] = json::array({{{"name", "m"}}});    // absent before
  after["scalar_parent"] = {{"now", "an object"}};                                  // type changed
  after["weird"]["9"] = 3;
  const std::vector<std::string> touched = {
      "/spec/template/spec/containers/10", "/spec/template/metadata", "/spec/template/spec/volumes",
      "/scalar_parent/now", "/weird/9", "/spec/template/spec/initContainers",  // never written
      "/metadata"};                                                             // never written
  const json copy = CopyTouched(before, touched);
  EXPECT_EQ(ScopedPatch(copy, after, touched), json::diff(before, after));
  EXPECT_EQ(ScopedPatch(copy, after, touched), ScopedPatch(before, after, touched));
  EXPECT_FALSE(copy.contains("huge"));  // nothing untouched is copied
  EXPECT_FALSE(copy.contains("kind"));
  EXPECT_EQ(copy["spec"]["template"]["spec"]["containers"][0], nullptr);  // a placeholder
  EXPECT_EQ(copy["spec"]["template"]["spec"]["containers"][10], before["spec"]["template"]["spec"]["containers"][10]);
}

TEST(CopyTouchedTest, NothingTouchedCopiesNothing) {
  EXPECT_EQ(CopyTouched(Object(), {}), json::object());
}

}  // namespace
}  // namespace graintune::webhook
