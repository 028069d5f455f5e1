#include "webhook/site_finders.h"

namespace graintune::webhook {
namespace {

// graintune.dev/worker-count: "-1" on the workload (or a policy that tunes unset counts): the
// override is injected as M_GRAIN_WORKER_COUNT into the MaxText container.
class AnnotationSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>& warnings) const override {
    const std::string key = kWorkerCountKeys[0];
    const bool set_in_yaml = ctx.config_values && ctx.config_values->count(key);
    const bool unset = !ctx.overrides.HasKey(key) && !set_in_yaml;
    const bool wanted = ctx.annotations.requests_tuning || (ctx.policy.tune_unset && unset);
    if (!wanted || !ctx.overrides.invokes_maxtext) return;
    if (ctx.overrides.HasKey(key)) {
      const std::string value = *ctx.overrides.Value(key);
      if (value != "-1" && !(ctx.managed && ctx.annotations.applied_workers &&
                             value == std::to_string(*ctx.annotations.applied_workers)))
        warnings.push_back("graintune: container " + ctx.name + " sets " + key + "=" + value +
                           " explicitly; the graintune.dev/worker-count annotation does not "
                           "override it");
      return;  // an explicit override, or a -1 the override finder rewrites
    }
    Edit e;
    e.op = Edit::Op::kAppendEnv;
    e.site = "annotation";
    e.requested_by_annotation = ctx.annotations.requests_tuning;
    e.key = key;
    e.container_pointer = ctx.pointer;
    e.container_name = ctx.name;
    e.before = ctx.annotations.requests_tuning ? "-1" : "(unset)";
    edits.push_back(std::move(e));
  }
};

}  // namespace

GRAINTUNE_REGISTER_SITE_FINDER(AnnotationSites, 30);

}  // namespace graintune::webhook
