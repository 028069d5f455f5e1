#include "webhook/site_finders.h"

namespace graintune::webhook {

const std::vector<std::unique_ptr<SiteFinder>>& DefaultSiteFinders() {
  static const std::vector<std::unique_ptr<SiteFinder>> kFinders = [] {
    std::vector<std::unique_ptr<SiteFinder>> finders;
    finders.push_back(std::make_unique<OverrideSites>());
    finders.push_back(std::make_unique<ConfigMapSites>());
    finders.push_back(std::make_unique<AnnotationSites>());
    return finders;
  }();
  return kFinders;
}

}  // namespace graintune::webhook
