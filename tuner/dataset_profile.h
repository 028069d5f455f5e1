// DatasetProfile: what one Grain worker process delivers and costs for a dataset.
//
// Three sources, in order of trust: learned from this dataset's earlier trials, the job's
// graintune.dev/ annotations, and a default per dataset kind. The defaults are measured-shape
// figures chosen on the safe side of real datasets: per-worker throughput at the low end
// (more workers than needed is cheap) and per-worker memory at the high end (so a first pick
// never runs a host out of memory). Plain values; no I/O.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace graintune {

enum class DatasetKind {
  kArrayRecord,  // pre-tokenized records (ArrayRecord/TFRecord of token ids): cheap per record
  kRawText,      // raw text tokenized on the fly and packed: the measured case
  kHeavyDecode,  // heavy per-record decode (images, audio, large JSON): expensive
};

std::string ToString(DatasetKind kind);
// "array-record" | "raw-text" | "heavy-decode" (and a few aliases); error otherwise.
Result<DatasetKind> ParseDatasetKind(const std::string& text);

// What MaxText's settings imply: tokenize_train_data=false -> pre-tokenized.
DatasetKind InferDatasetKind(std::optional<bool> tokenize_train_data);

struct DatasetProfile {
  DatasetKind kind = DatasetKind::kRawText;
  double tokens_per_second_per_worker = 0;
  double worker_memory_bytes = 0;   // resident memory of one worker process
  std::string source;               // "raw-text default", "annotation", "learned from 3 trials"
  // The per-worker rate is this dataset's (annotated or learned), not the kind's default.
  bool rate_known = false;
};

DatasetProfile DefaultProfile(DatasetKind kind);

// The per-worker rates a dataset of `kind` plausibly has, in tokens per second: the default
// is a typical figure, real datasets of one kind sit anywhere from 0.3x to 3.6x of it (record
// sizes, tokenizer, packing, decode cost; the seed's raw-text measurement, ~2.1k tok/s on a
// v6e host, is near the default).
struct RateRange {
  double low = 0;
  double high = 0;
};
RateRange PlausibleRates(DatasetKind kind);
inline constexpr double kPlausibleRateLow = 0.3;   // of the kind's default
inline constexpr double kPlausibleRateHigh = 3.6;

// The default for `kind` with any of the given figures replacing it (annotations).
DatasetProfile ProfileWithOverrides(DatasetKind kind,
                                    std::optional<double> tokens_per_second_per_worker,
                                    std::optional<double> worker_memory_bytes);

}  // namespace graintune
