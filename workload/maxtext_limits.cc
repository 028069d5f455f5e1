#include "workload/maxtext_limits.h"

#include <algorithm>

namespace graintune::workload {
namespace {

WorkerLimit Unknown(std::string why) { return {WorkerLimit::Kind::kUnknown, 0, std::move(why)}; }

// The data files per host MaxText computes (input_pipeline/input_pipeline_utils.py
// compute_file_sharding, lines 566-576).
long FilesPerHost(long files, long hosts) { return files >= hosts ? std::max(files / hosts, 1L) : 1; }

}  // namespace

namespace {

WorkerLimit LimitOfOneStart(const WorkerLimitQuery& q) {
  const std::optional<std::string> dataset_type = EffectiveValue(q.config, "dataset_type");
  if (!dataset_type)
    return Unknown("graintune cannot read dataset_type, and MaxText accepts at most 1 worker for hf");
  // configs/types.py (maxtext 0.2.5, lines 5398-5406): with dataset_type=hf,
  // "grain_worker_count > 1" raises "Only supports <= 1 for now".
  if (*dataset_type == "hf")
    return q.eval ? WorkerLimit{}
                  : WorkerLimit{WorkerLimit::Kind::kAtMost, 1, "MaxText accepts at most 1 worker for dataset_type=hf"};
  if (*dataset_type != "grain") return {};
  const std::optional<std::string> file_type = EffectiveValue(q.config, "grain_file_type");
  if (!file_type)
    return Unknown("graintune cannot read grain_file_type, and for tfrecord or parquet MaxText "
                   "accepts at most the data files per host");
  if (*file_type != "tfrecord" && *file_type != "parquet") return {};
  // input_pipeline/grain_data_processing.py get_datasets (lines 266-282): with tfrecord or
  // parquet files, grain_worker_count above the files per host raises ValueError.
  const char* files_key = q.eval ? "grain_eval_files" : "grain_train_files";
  long files = 0;  // 0: not known
  if (!q.eval && q.data_files) files = *q.data_files < 1 ? -1 : *q.data_files;
  if (files == 0) {
    const std::optional<std::string> pattern = EffectiveValue(q.config, files_key);
    if (pattern && !pattern->empty() && pattern->find_first_of("*?[;") == std::string::npos) files = 1;
  }
  const std::string kind = *file_type + " files";
  if (files == 0)
    return Unknown("MaxText accepts at most the " + kind + " per host and graintune does not know "
                   "how many there are (state them in the graintune.dev/data-files annotation)");
  if (files < 0) return Unknown("graintune.dev/data-files is not a positive count");
  const long hosts = q.hosts.value_or(0);
  if (hosts < 1)
    return Unknown("MaxText accepts at most the " + kind + " per host and graintune does not know "
                   "how many hosts load data");
  const long per_host = FilesPerHost(files, hosts);
  return {WorkerLimit::Kind::kAtMost, static_cast<int>(std::min(per_host, 1L << 20)),
          "MaxText accepts at most the " + kind + " per host (" + std::to_string(files) + " over " +
              std::to_string(hosts) + " hosts: " + std::to_string(per_host) + ")",
          true};
}

}  // namespace

WorkerLimit MaxTextWorkerLimit(const WorkerLimitQuery& q) {
  const ContainerOverrides& all = q.config.overrides;
  if (all.starts <= 1) return LimitOfOneStart(q);
  // Several MaxText starts in one script: the value written must pass every start that sees it.
  const char* key = q.eval ? "grain_worker_count_eval" : "grain_worker_count";
  WorkerLimit strictest;
  for (size_t i = 0; i < all.starts; ++i) {
    const ContainerOverrides start = all.OfStart(i);
    const RunResumeQuery config = q.config.ForStart(start);
    if (!SeesGraintunesValue(config, key)) continue;
    WorkerLimit limit = LimitOfOneStart({config, q.eval, q.data_files, q.hosts});
    if (limit.kind == WorkerLimit::Kind::kUnknown) return limit;
    if (limit.kind == WorkerLimit::Kind::kAtMost &&
        (strictest.kind != WorkerLimit::Kind::kAtMost || limit.at_most < strictest.at_most))
      strictest = std::move(limit);
  }
  return strictest;
}

}  // namespace graintune::workload
