#include "webhook/site_finders.h"

namespace graintune::webhook {
namespace {

// grain_worker_count: -1 in a MaxText YAML mounted from a ConfigMap: an override is injected
// right after the config file argument (the ConfigMap is never edited).
class ConfigMapSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>&) const override {
    if (!ctx.config_values || !ctx.overrides.config) return;
    for (const char* key : kWorkerCountKeys) {
      auto it = ctx.config_values->find(key);
      if (it == ctx.config_values->end() || it->second != "-1") continue;
      // An override on the command line or in env already wins over the YAML: nothing to add
      // (and adding one would create the argv/env conflict MaxText refuses).
      if (ctx.overrides.HasKey(key)) continue;
      const workload::ConfigArgument& config = *ctx.overrides.config;
      Edit e;
      e.site = "configmap";
      e.key = key;
      e.container_pointer = ctx.pointer;
      e.container_name = ctx.name;
      e.pointer = config.pointer;
      e.before = "-1";
      if (config.location == workload::OverrideLocation::kScript) {
        e.op = Edit::Op::kInsertText;
        e.begin = e.end = config.end;
      } else {
        e.op = Edit::Op::kInsertArg;
      }
      edits.push_back(std::move(e));
    }
  }
};

}  // namespace

GRAINTUNE_REGISTER_SITE_FINDER(ConfigMapSites, 20);

}  // namespace graintune::webhook
