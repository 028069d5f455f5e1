// The graintune.dev/ annotations of a workload, parsed. Every value is optional; a value that
// cannot be parsed is dropped with a warning naming the annotation and the problem (the
// webhook returns it as an admission warning), never an error that blocks admission.
//
//   graintune.dev/worker-count                 "-1": tune this workload (annotation-only mode);
//                                              an integer: the value graintune applied
//   graintune.dev/eval-worker-count            the value applied to grain_worker_count_eval
//   graintune.dev/tuning-key                   learn across submissions under this key
//   graintune.dev/dataset                      stable dataset name (learned profiles)
//   graintune.dev/dataset-kind                 array-record | raw-text | heavy-decode
//   graintune.dev/tokens-per-second-per-worker number
//   graintune.dev/worker-memory                quantity, e.g. 2Gi
//   graintune.dev/record-bytes                 quantity, mean bytes per raw record
//   graintune.dev/tokenize                     true | false
//   graintune.dev/step-seconds                 expected compute step time, number
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/dataset_profile.h"

namespace graintune::workload {

inline constexpr char kAnnotationPrefix[] = "graintune.dev/";
inline constexpr char kWorkerCountAnnotation[] = "graintune.dev/worker-count";
inline constexpr char kEvalWorkerCountAnnotation[] = "graintune.dev/eval-worker-count";
inline constexpr char kReasonAnnotation[] = "graintune.dev/reason";
inline constexpr char kTuningKeyAnnotation[] = "graintune.dev/tuning-key";
inline constexpr char kDatasetAnnotation[] = "graintune.dev/dataset";
inline constexpr char kFirstAttemptAnnotation[] = "graintune.dev/first-attempt-worker-count";
inline constexpr char kManagedLabel[] = "graintune.dev/managed";
// The run's value a pod's practice lap led to ("N"), or why there is none ("none: ..."): the
// operator writes it, graintune-launcher reads it through the downward API.
inline constexpr char kLapValueAnnotation[] = "graintune.dev/lap-value";
// The attempt a pod's value is for (graintune writes it; JobSet's label wins when present).
inline constexpr char kAttemptAnnotation[] = "graintune.dev/attempt";
// On a plain Job's retry pod: how many failed pods of its Job were counted into its attempt, so
// that a reinvocation of the webhook on the same pod counts them once, not twice.
inline constexpr char kFailedPodsCountedAnnotation[] = "graintune.dev/failed-pods-counted";
inline constexpr char kRestartAttemptLabel[] = "jobset.sigs.k8s.io/restart-attempt";
inline constexpr char kJobSetNameLabel[] = "jobset.sigs.k8s.io/jobset-name";
// What graintune read of the run an attempt belongs to (workload/run_resume.h), written beside
// the value so the operator records the run and judges how it ended:
//   graintune.dev/checkpoint-dir  the checkpoint directory MaxText writes
//   graintune.dev/resume          "pins-workers" (a resume restores Grain's iterator: the run
//                                 keeps one value) or "free"
//   graintune.dev/steps           the configured steps (a run ending before steps - 1 ended early)
inline constexpr char kCheckpointDirAnnotation[] = "graintune.dev/checkpoint-dir";
inline constexpr char kResumeAnnotation[] = "graintune.dev/resume";
inline constexpr char kStepsAnnotation[] = "graintune.dev/steps";
inline constexpr char kPinsWorkers[] = "pins-workers";
// The GrainTunings ("namespace/name", comma-separated) whose learned figures set the value; the
// operator copies it into the GrainTuning it creates (spec.learnedFrom).
inline constexpr char kLearnedFromAnnotation[] = "graintune.dev/learned-from";
// The training data files (an input a user writes: MaxText accepts at most the tfrecord or
// parquet files per host as workers, workload/maxtext_limits.h), and the data-loading hosts of
// the workload (written by graintune on a Job's or JobSet's pod template, read back at its pods).
inline constexpr char kDataFilesAnnotation[] = "graintune.dev/data-files";
inline constexpr char kDataHostsAnnotation[] = "graintune.dev/data-hosts";
// The exporter sidecar graintune injects into tuned pods (the webhook names it; the operator
// reads its status).
inline constexpr char kExporterContainerName[] = "graintune-exporter";

struct WorkloadAnnotations {
  bool requests_tuning = false;            // worker-count is "-1"
  std::optional<int> applied_workers;      // worker-count is a positive integer
  std::optional<int> applied_eval_workers;
  std::optional<int> applied_attempt;      // attempt: the attempt graintune applied a value for
  std::optional<std::string> tuning_key;
  std::optional<std::string> dataset;
  std::optional<DatasetKind> dataset_kind;
  std::optional<double> tokens_per_second_per_worker;
  std::optional<double> worker_memory_bytes;
  std::optional<double> record_bytes;
  std::optional<bool> tokenize;
  std::optional<double> step_seconds;
  std::optional<long> data_files;
  std::optional<long> data_hosts;
};

// True for the graintune.dev/ annotations a user writes as inputs to the decision (dataset,
// rates, tuning key, ...), false for the ones graintune writes as results.
bool IsInputAnnotation(const std::string& key);

// graintune.dev/learned-from's value for a list of "namespace/name", and back (empty items
// dropped; at most kMaxLearnedFrom items are read).
std::string JoinLearnedFrom(const std::vector<std::string>& grain_tunings);
std::vector<std::string> SplitLearnedFrom(const std::string& annotation);
inline constexpr size_t kMaxLearnedFrom = 16;

// Parses the graintune.dev/ keys of `annotations`; appends a warning per bad value.
WorkloadAnnotations ParseWorkloadAnnotations(const std::map<std::string, std::string>& annotations,
                                             std::vector<std::string>& warnings);

}  // namespace graintune::workload
