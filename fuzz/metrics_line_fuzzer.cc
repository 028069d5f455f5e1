// libFuzzer target: one line of MaxText's metrics file (telemetry/maxtext_metrics.h), the
// exporter's only untrusted input besides /proc.
//
// A parsed step is what the operator's trials are computed from, so beyond crashes the target
// checks what the header promises of a success (a violation traps): a whole, non-negative step;
// a finite, non-negative step time; tflops and tokens each finite and non-negative, or -1 when
// the line lacks them. UBSan (no recovery) turns an out-of-range conversion into a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "telemetry/maxtext_metrics.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool AbsentOrMeasured(double v) { return v == -1 || (std::isfinite(v) && v >= 0); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const graintune::Result<graintune::telemetry::MetricsLine> parsed = graintune::telemetry::ParseMetricsLine(line);
  if (!parsed.ok()) {
    Check(!parsed.error().empty());
    return 0;
  }
  if (!parsed->sample) return 0;  // a line that is no training step
  const graintune::telemetry::StepSample* sample = &*parsed->sample;
  Check(sample->step >= 0);
  Check(std::isfinite(sample->step_time_seconds) && sample->step_time_seconds >= 0);
  Check(AbsentOrMeasured(sample->tflops_per_device));
  Check(AbsentOrMeasured(sample->tokens_per_device_per_second));
  return 0;
}
