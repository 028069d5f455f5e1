#include "webhook/site_finders.h"

#include <algorithm>

namespace graintune::webhook {
namespace {

// -1 written as an override: argv element, word in a bash -c script, or M_ env var. On a pod
// graintune already manages, also the value it applied (so a retry gets the current value).
class OverrideSites : public SiteFinder {
 public:
  void Find(const ContainerContext& ctx, std::vector<Edit>& edits,
            std::vector<std::string>& warnings) const override {
    for (const workload::Override& o : ctx.overrides.overrides) {
      if (o.key != kWorkerCountKeys[0] && o.key != kWorkerCountKeys[1]) continue;
      const std::optional<int>& applied = IsEvalKey(o.key) ? ctx.annotations.applied_eval_workers
                                                           : ctx.annotations.applied_workers;
      const bool auto_value = o.value == "-1";
      const bool ours = ctx.managed && applied && o.value == std::to_string(*applied);
      if (!auto_value && !ours) continue;
      Edit e;
      e.op = Edit::Op::kReplaceRange;
      if (!o.replaceable) {
        // Found, and named as found: MaxText picks it by RAM (explain says so).
        e.op = Edit::Op::kLeave;
        e.left_why = o.key + " is not written in one piece graintune can rewrite (quotes split it, or it "
                     "comes from a variable or a ConfigMap): MaxText picks it by RAM";
        warnings.push_back("graintune: " + o.key + " in container " + ctx.name + ": " + e.left_why);
      }
      e.site = ToString(o.location);
      e.key = o.key;
      e.container_pointer = ctx.pointer;
      e.container_name = ctx.name;
      e.pointer = o.pointer;
      e.begin = o.value_begin;
      e.end = o.value_end;
      e.before = o.value;
      edits.push_back(std::move(e));
    }
    // A count graintune cannot read ($V, ${V:=-1}, a function's argument): it may be -1. Named
    // as found, left to MaxText, with why (a value graintune cannot see is never rewritten).
    // A word that may set any key ($ARGS, "${ARGS[@]}", what a sourced file exports) may set the
    // training count too, in a container that starts MaxText.
    for (const workload::UnknownKey& u : ctx.overrides.unknown) {
      const bool any_key = u.key.empty() && ctx.overrides.invokes_maxtext;
      if (!any_key && u.key != kWorkerCountKeys[0] && u.key != kWorkerCountKeys[1]) continue;
      const std::string key = any_key ? kWorkerCountKeys[0] : u.key;
      const bool already = std::any_of(edits.begin(), edits.end(), [&](const Edit& e) {
        return e.container_pointer == ctx.pointer && e.key == key;
      });
      if (already) continue;
      Edit e;
      e.op = Edit::Op::kLeave;
      e.site = u.env ? "env" : "unknown";
      e.key = key;
      e.container_pointer = ctx.pointer;
      e.container_name = ctx.name;
      e.before = "?";
      e.left_why = key + " may be -1, and graintune cannot tell: " + u.why + "; if it is, MaxText picks it by RAM";
      edits.push_back(std::move(e));
    }
  }
};

}  // namespace

GRAINTUNE_REGISTER_SITE_FINDER(OverrideSites, 10);

}  // namespace graintune::webhook
