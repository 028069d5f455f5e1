// MaxTextWorkerLimit: the largest grain_worker_count (or grain_worker_count_eval) the pinned
// MaxText (0.2.5) starts with, for one container's effective config, so that graintune never
// writes a value MaxText refuses where -1 would have started.
//
// MaxText's own checks (the lines are cited in maxtext_limits.cc):
//   - dataset_type=hf: grain_worker_count at most 1 (configs/types.py validation).
//   - dataset_type=grain with grain_file_type tfrecord or parquet: at most the data files per
//     host (input_pipeline/grain_data_processing.py raises "Lower grain_worker_count to at most
//     N"), N = max(files / hosts, 1) when files >= hosts, else 1
//     (input_pipeline_utils.compute_file_sharding). -1 passes both checks.
// The file count comes from where a user states it: the graintune.dev/data-files annotation
// (the training files), else a grain_train_files / grain_eval_files that names one file (no
// glob character: MaxText globs it to that one file). hosts: the processes that load data
// (one per pod of the slice(s)).
// Where a limit may apply and graintune cannot tell it (dataset_type or grain_file_type
// unknown, a file count or host count not known), the answer is kUnknown with a reason: the
// caller leaves -1 to MaxText. Pure; never throws.
#pragma once

#include <optional>
#include <string>

#include "workload/run_resume.h"

namespace graintune::workload {

struct WorkerLimit {
  enum class Kind { kNone, kAtMost, kUnknown } kind = Kind::kNone;
  int at_most = 0;  // kAtMost
  std::string why;  // kAtMost and kUnknown: one sentence for reasons and warnings
  bool per_host = false;  // kAtMost: from the files per host (the host count was read)
};

struct WorkerLimitQuery {
  const RunResumeQuery& config;
  bool eval = false;                 // grain_worker_count_eval (else grain_worker_count)
  std::optional<long> data_files;    // graintune.dev/data-files (training files)
  std::optional<long> hosts;         // data-loading processes; nullopt when unknown
};

WorkerLimit MaxTextWorkerLimit(const WorkerLimitQuery& query);

}  // namespace graintune::workload
