#include "workload/workload_annotations.h"

#include <charconv>

#include "tuner/quantity.h"

namespace graintune::workload {
namespace {

std::optional<double> PositiveNumber(const std::string& text) {
  std::optional<double> value = ParseFiniteNumber(text);
  if (!value || *value <= 0 || *value > 1e12) return std::nullopt;
  return value;
}

std::optional<int> Integer(const std::string& text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

bool IsInputAnnotation(const std::string& key) {
  if (key.rfind(kAnnotationPrefix, 0) != 0) return false;
  for (const char* result : {kWorkerCountAnnotation, kEvalWorkerCountAnnotation, kReasonAnnotation,
                             kFirstAttemptAnnotation, kAttemptAnnotation, kCheckpointDirAnnotation,
                             kResumeAnnotation, kStepsAnnotation, kFailedPodsCountedAnnotation,
                             kLearnedFromAnnotation,
                             kDataHostsAnnotation,
                             "graintune.dev/exporter-port", "graintune.dev/test-terminate",
                             "graintune.dev/test-exporter-message"})
    if (key == result) return false;
  return true;
}

std::string JoinLearnedFrom(const std::vector<std::string>& grain_tunings) {
  std::string text;
  for (const std::string& g : grain_tunings) text += (text.empty() ? "" : ",") + g;
  return text;
}

std::vector<std::string> SplitLearnedFrom(const std::string& annotation) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= annotation.size() && out.size() < kMaxLearnedFrom) {
    size_t comma = annotation.find(',', from);
    if (comma == std::string::npos) comma = annotation.size();
    if (comma > from) out.push_back(annotation.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

WorkloadAnnotations ParseWorkloadAnnotations(const std::map<std::string, std::string>& annotations,
                                             std::vector<std::string>& warnings) {
  WorkloadAnnotations out;
  auto bad = [&](const std::string& key, const std::string& value, const std::string& why) {
    warnings.push_back("graintune: ignoring annotation " + key + "=\"" + value + "\": " + why);
  };
  for (const auto& [key, value] : annotations) {
    if (key.rfind(kAnnotationPrefix, 0) != 0) continue;
    const std::string name = key.substr(sizeof(kAnnotationPrefix) - 1);
    if (name == "worker-count" || name == "eval-worker-count") {
      std::optional<int> n = Integer(value);
      if (!n || (*n != -1 && (*n < 0 || *n > 4096))) {
        bad(key, value, "want -1 or a worker count in [0, 4096]");
        continue;
      }
      if (name == "worker-count") {
        if (*n == -1) out.requests_tuning = true;
        else out.applied_workers = *n;
      } else if (*n >= 0) {
        out.applied_eval_workers = *n;
      }
    } else if (name == "attempt") {
      std::optional<int> n = Integer(value);
      if (!n || *n < 0) bad(key, value, "want a non-negative attempt number");
      else out.applied_attempt = *n;
    } else if (name == "tuning-key") {
      if (value.empty() || value.size() > 253) bad(key, value, "want 1-253 characters");
      else out.tuning_key = value;
    } else if (name == "dataset") {
      if (value.empty()) bad(key, value, "empty");
      else out.dataset = value;
    } else if (name == "dataset-kind") {
      Result<DatasetKind> kind = ParseDatasetKind(value);
      if (!kind.ok()) bad(key, value, kind.error());
      else out.dataset_kind = *kind;
    } else if (name == "tokens-per-second-per-worker") {
      if (auto n = PositiveNumber(value)) out.tokens_per_second_per_worker = n;
      else bad(key, value, "want a positive number");
    } else if (name == "step-seconds") {
      if (auto n = PositiveNumber(value)) out.step_seconds = n;
      else bad(key, value, "want a positive number of seconds");
    } else if (name == "worker-memory" || name == "record-bytes") {
      Result<double> q = ParseNonNegativeQuantity(value, key);
      if (!q.ok() || *q <= 0) {
        bad(key, value, q.ok() ? "must be > 0" : q.error());
        continue;
      }
      (name == "worker-memory" ? out.worker_memory_bytes : out.record_bytes) = *q;
    } else if (name == "data-files" || name == "data-hosts") {
      const std::optional<double> n = PositiveNumber(value);
      if (!n || *n != static_cast<double>(static_cast<long>(*n)) || *n > 1e9)
        bad(key, value, "want a whole number from 1 to 1000000000");
      else (name == "data-files" ? out.data_files : out.data_hosts) = static_cast<long>(*n);
    } else if (name == "tokenize") {
      if (value == "true") out.tokenize = true;
      else if (value == "false") out.tokenize = false;
      else bad(key, value, "want true or false");
    }
    // graintune.dev/reason and other keys graintune writes itself are not inputs.
  }
  return out;
}

}  // namespace graintune::workload
