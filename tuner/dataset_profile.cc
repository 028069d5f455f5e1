#include "tuner/dataset_profile.h"

#include <algorithm>
#include <cctype>

namespace graintune {
namespace {
constexpr double kGiB = 1024.0 * 1024 * 1024;
}

std::string ToString(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kArrayRecord: return "array-record";
    case DatasetKind::kRawText: return "raw-text";
    case DatasetKind::kHeavyDecode: return "heavy-decode";
  }
  return "raw-text";
}

Result<DatasetKind> ParseDatasetKind(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "array-record" || t == "arrayrecord" || t == "pre-tokenized" || t == "tokenized")
    return DatasetKind::kArrayRecord;
  if (t == "raw-text" || t == "text" || t == "raw") return DatasetKind::kRawText;
  if (t == "heavy-decode" || t == "image" || t == "audio" || t == "multimodal")
    return DatasetKind::kHeavyDecode;
  return Status::Error("unknown dataset kind '" + text +
                       "' (want array-record, raw-text or heavy-decode)");
}

DatasetKind InferDatasetKind(std::optional<bool> tokenize_train_data) {
  if (tokenize_train_data && !*tokenize_train_data) return DatasetKind::kArrayRecord;
  return DatasetKind::kRawText;  // MaxText's default tokenizes on the fly
}

DatasetProfile DefaultProfile(DatasetKind kind) {
  DatasetProfile profile;
  profile.kind = kind;
  profile.source = ToString(kind) + " default";
  switch (kind) {
    case DatasetKind::kArrayRecord:
      profile.tokens_per_second_per_worker = 40000;
      profile.worker_memory_bytes = 2.0 * kGiB;
      break;
    case DatasetKind::kRawText:
      // The Llama3-8B v6e-32 measurements show ~2.1k tok/s for one worker (v6e, Llama3-8B, tokenize + pack).
      profile.tokens_per_second_per_worker = 2000;
      profile.worker_memory_bytes = 3.0 * kGiB;
      break;
    case DatasetKind::kHeavyDecode:
      profile.tokens_per_second_per_worker = 500;
      profile.worker_memory_bytes = 4.0 * kGiB;
      break;
  }
  return profile;
}

RateRange PlausibleRates(DatasetKind kind) {
  const double typical = DefaultProfile(kind).tokens_per_second_per_worker;
  return {kPlausibleRateLow * typical, kPlausibleRateHigh * typical};
}

DatasetProfile ProfileWithOverrides(DatasetKind kind,
                                    std::optional<double> tokens_per_second_per_worker,
                                    std::optional<double> worker_memory_bytes) {
  DatasetProfile profile = DefaultProfile(kind);
  if (tokens_per_second_per_worker && *tokens_per_second_per_worker > 0) {
    profile.tokens_per_second_per_worker = *tokens_per_second_per_worker;
    profile.source = "annotated";
    profile.rate_known = true;
  }
  if (worker_memory_bytes && *worker_memory_bytes > 0) {
    profile.worker_memory_bytes = *worker_memory_bytes;
    profile.source = "annotated";
  }
  return profile;
}

}  // namespace graintune
