#include "workload/kubernetes_expansion.h"

#include <map>

#include <gtest/gtest.h>

#include "workload/shell_words.h"

namespace graintune::workload {
namespace {

using Kind = KubernetesVariable::Kind;

KubernetesExpanded Expand(const std::string& text) {
  const std::map<std::string, KubernetesVariable> vars = {
      {"DS", {Kind::kKnown, "grain"}}, {"EMPTY", {Kind::kKnown, ""}}, {"TOKEN", {Kind::kUnknown, ""}}};
  return ExpandKubernetesReferences(text, [&](const std::string& name) {
    auto it = vars.find(name);
    return it == vars.end() ? KubernetesVariable{} : it->second;
  });
}

TEST(KubernetesExpansionTest, ReferencesToDefinedVariablesAreReplaced) {
  const KubernetesExpanded e = Expand("dataset_type=$(DS) x=$(EMPTY)y");
  EXPECT_EQ(e.text, "dataset_type=grain x=y");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(e.unknown_reference.empty());
  // "grain" came from the variable; "dataset_type=" and " x=" from the text as written.
  EXPECT_EQ(e.raw_offset[0], 0u);
  EXPECT_EQ(e.raw_offset[13], kNotInScript);
  EXPECT_EQ(e.raw_offset[18], 18u);  // the space after $(DS)
}

TEST(KubernetesExpansionTest, UndefinedReferencesAndOtherDollarsStayAsWritten) {
  for (const std::string text : {"$(NOPE)", "$HOME ${X} $1", "cost=5$", "$(unclosed", "$(date +%s)"}) {
    const KubernetesExpanded e = Expand(text);
    EXPECT_EQ(e.text, text);
    EXPECT_FALSE(e.changed) << text;
    EXPECT_TRUE(e.unknown_reference.empty()) << text;
  }
}

TEST(KubernetesExpansionTest, ADoubleDollarIsOneDollarAndEscapesAReference) {
  EXPECT_EQ(Expand("$$(DS)").text, "$(DS)");
  EXPECT_EQ(Expand("$$$(DS)").text, "$grain");
  EXPECT_EQ(Expand("a$$b").text, "a$b");
  EXPECT_EQ(Expand("$$").raw_offset, std::vector<size_t>{0});
}

TEST(KubernetesExpansionTest, AReferenceGraintuneCannotSeeStaysAndIsNamed) {
  const KubernetesExpanded e = Expand("run_name=$(TOKEN) dataset_type=$(DS)");
  EXPECT_EQ(e.text, "run_name=$(TOKEN) dataset_type=grain");
  EXPECT_EQ(e.unknown_reference, "$(TOKEN)");
}

TEST(KubernetesExpansionTest, GrowthIsBounded) {
  const std::string big(kMaxKubernetesExpansionGrowth / 2 + 1, 'x');
  const auto lookup = [&](const std::string&) { return KubernetesVariable{Kind::kKnown, big}; };
  const KubernetesExpanded e = ExpandKubernetesReferences("$(A)$(A)$(A)", lookup);
  EXPECT_LE(e.text.size(), 12 + kMaxKubernetesExpansionGrowth);
  EXPECT_FALSE(e.unknown_reference.empty());
}

}  // namespace
}  // namespace graintune::workload
