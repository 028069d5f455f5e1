#include "webhook/site_finders.h"

#include <gtest/gtest.h>

#include <typeinfo>

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

// Registered by this test: it must run after the three built-in finders (rank 1000) and see
// their edits.
class CountingFinder : public SiteFinder {
 public:
  void Find(const ContainerContext&, std::vector<Edit>& edits,
            std::vector<std::string>&) const override {
    seen_edits = edits.size();
    ++calls;
  }
  static inline size_t seen_edits = 0;
  static inline int calls = 0;
};
GRAINTUNE_REGISTER_SITE_FINDER(CountingFinder, 1000);

TEST(SiteFindersTest, EveryFinderRegistersItselfAndRunsInRankOrder) {
  const auto& finders = SiteFinders();
  ASSERT_EQ(finders.size(), 4u);  // override, configmap, annotation, and this test's
  EXPECT_EQ(typeid(*finders.back()), typeid(CountingFinder));

  const json container = {{"name", "jax-tpu"},
                          {"command", {"python3", "-m", "MaxText.train", "grain_worker_count=-1"}}};
  const workload::ContainerOverrides overrides = workload::ScanContainer(container);
  const workload::WorkloadAnnotations annotations;
  const Policy policy;
  const ContainerContext ctx{container, "/spec/containers/0", "jax-tpu", overrides, nullptr,
                             annotations, false, policy};
  std::vector<Edit> edits;
  std::vector<std::string> warnings;
  CountingFinder::calls = 0;  // other tests of this binary may have run the finders
  for (const auto& finder : finders) finder->Find(ctx, edits, warnings);
  ASSERT_EQ(edits.size(), 1u);
  EXPECT_EQ(edits[0].site, "args");
  EXPECT_EQ(edits[0].before, "-1");
  EXPECT_EQ(CountingFinder::calls, 1);
  EXPECT_EQ(CountingFinder::seen_edits, 1u);  // it ran last
}

}  // namespace
}  // namespace graintune::webhook
