#include "webhook/site_finders.h"

#include <algorithm>

namespace graintune::webhook {
namespace {

struct Registry {
  std::vector<std::pair<int, std::unique_ptr<SiteFinder>>> ranked;
  std::vector<std::unique_ptr<SiteFinder>> ordered;
};

// Constructed on first use, so registration from any translation unit's statics is safe.
Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

bool RegisterSiteFinder(int rank, std::unique_ptr<SiteFinder> finder) {
  Registry& r = TheRegistry();
  r.ranked.emplace_back(rank, std::move(finder));
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

const std::vector<std::unique_ptr<SiteFinder>>& SiteFinders() {
  // Built once, when first asked for (after static initialisation has registered every finder).
  static const bool kOrdered = [] {
    Registry& r = TheRegistry();
    for (auto& [rank, finder] : r.ranked) r.ordered.push_back(std::move(finder));
    r.ranked.clear();
    return true;
  }();
  (void)kOrdered;
  return TheRegistry().ordered;
}

}  // namespace graintune::webhook
