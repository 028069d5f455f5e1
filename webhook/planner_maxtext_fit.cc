#include "webhook/planner_maxtext_fit.h"

#include <string>

#include "tuner/attempt_value.h"
#include "tuner/decision.h"
#include "webhook/site_finders.h"
#include "workload/identity.h"
#include "workload/maxtext_limits.h"

namespace graintune::webhook::planner {
namespace {

// A positive whole number at `pointer` in `object`, `absent` when it is not there; nullopt
// when it is something else.
std::optional<long> CountAt(const json& object, const std::string& pointer, long absent) {
  const json::json_pointer p(pointer);
  if (!object.contains(p)) return absent;
  const json& v = object.at(p);
  if (!v.is_number_integer() || v.get<long>() < 1 || v.get<long>() > 1000000) return std::nullopt;
  return v.get<long>();
}

// Caps plan.workers (and plan.eval_workers) at what the trainer's MaxText accepts
// (workload/maxtext_limits.h). False, with a warning, when a limit may apply that graintune
// cannot tell: -1 is then left to MaxText, which never refuses it. `hosts_read`: whether a
// limit came from the host count (its pods are then told it).
bool WithinMaxTextLimits(const ContainerSites& trainer, std::optional<long> data_files,
                         std::optional<long> hosts, bool has_eval, Plan& plan, bool& hosts_read) {
  const workload::ConfigValues* config = trainer.config ? &*trainer.config : nullptr;
  const workload::RunResumeQuery query{trainer.overrides,
                                       config,
                                       workload::ViewOfConfig(trainer.overrides, config),
                                       "",
                                       trainer.applied_workers,
                                       trainer.applied_eval_workers};
  for (const bool eval : {false, true}) {
    if (eval && !has_eval) continue;
    const workload::WorkerLimit limit = workload::MaxTextWorkerLimit({query, eval, data_files, hosts});
    int& workers = eval ? plan.eval_workers : plan.workers;
    hosts_read = hosts_read || limit.per_host;
    if (limit.kind == workload::WorkerLimit::Kind::kUnknown) {
      plan.warnings.push_back(std::string("graintune: ") + kWorkerCountKeys[eval ? 1 : 0] +
                              " left as written for MaxText to pick: " + limit.why);
      plan.reason = limit.why;
      return false;
    }
    if (limit.kind == workload::WorkerLimit::Kind::kAtMost && workers > limit.at_most) {
      workers = limit.at_most;
      plan.reason += "; " + std::to_string(limit.at_most) + (eval ? " eval" : "") +
                     " at most: " + limit.why;
    }
  }
  return true;
}

}  // namespace

// The processes that load data for the workload `t` belongs to (one per pod: a JobSet's
// replicatedJob replicas x its Job's parallelism, a Job's parallelism, a bare Pod 1), or what
// graintune wrote on the pod template of its Job or JobSet; nullopt when it cannot tell (a pod
// or Job made by a workload graintune did not see).
std::optional<long> DataHosts(const json& object, WorkloadKind kind, const TemplateSites& t) {
  if (t.annotations.data_hosts) return t.annotations.data_hosts;
  const std::map<std::string, std::string> labels =
      workload::StringMap(workload::MetadataOf(object), "labels");
  switch (kind) {
    case WorkloadKind::kJobSet: {
      const std::string job = t.ref.metadata_pointer.substr(
          0, t.ref.metadata_pointer.rfind("/spec/template/metadata"));
      const std::string replicated_job = job.substr(0, job.rfind("/template"));
      const std::optional<long> replicas = CountAt(object, replicated_job + "/replicas", 1);
      const std::optional<long> parallelism = CountAt(object, job + "/spec/parallelism", 1);
      if (!replicas || !parallelism) return std::nullopt;
      return *replicas * *parallelism;
    }
    case WorkloadKind::kJob:
      if (labels.count(workload::kJobSetNameLabel)) return std::nullopt;
      return CountAt(object, "/spec/parallelism", 1);
    case WorkloadKind::kPod:
      if (labels.count("batch.kubernetes.io/job-name") || labels.count("job-name")) return std::nullopt;
      return 1;
    default:
      return std::nullopt;
  }
}

bool FitToMaxText(const json& object, WorkloadKind kind, const TemplateSites& primary,
                  const ContainerSites& trainer, const TuningInputs& inputs, bool has_eval,
                  Plan& plan, std::optional<long>& hosts_annotated) {
  if (has_eval) {
    const WorkerSplit split = SplitWithEval(plan.workers, ComputeBudgets(inputs).ceiling);
    plan.workers = split.workers;
    plan.eval_workers = split.eval_workers;
  }
  const std::optional<long> hosts = DataHosts(object, kind, primary);
  bool hosts_read = false;
  if (!WithinMaxTextLimits(trainer, primary.annotations.data_files, hosts, has_eval, plan, hosts_read))
    return false;
  if (hosts_read && kind != WorkloadKind::kPod) hosts_annotated = hosts;
  return true;
}

}  // namespace graintune::webhook::planner
