// libFuzzer target: an exporter's /steps answer as the operator reads it (ParseStepsDocument in
// telemetry/step_log.h, then TrialFromSteps in operator/tuning_reconciler.h). The answer comes
// from a pod its owner controls, so beyond crashes the target checks what the header promises
// (a violation traps): a refused answer says why and starts "rejected: "; an accepted one has
// at most kMaxStepsPerAnswer steps, rising, each within the bounds; and the trial made from it
// has only finite figures. UBSan (no recovery) turns an out-of-range conversion into a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "telemetry/step_log.h"
#include "operator/tuning_reconciler.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool AbsentOrWithin(double v, double hi) { return v == -1 || (std::isfinite(v) && v >= 0 && v <= hi); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graintune::telemetry;
  const std::string body(reinterpret_cast<const char*>(data), size);
  const graintune::Result<StepsDocument> doc = ParseStepsDocument(body);
  if (!doc.ok()) {
    Check(doc.error().rfind("rejected: ", 0) == 0);
    return 0;
  }
  Check(doc->steps.size() <= kMaxStepsPerAnswer);
  long previous = -1;
  for (const StepSample& s : doc->steps) {
    Check(s.step > previous && static_cast<double>(s.step) <= kMaxStep);
    previous = s.step;
    Check(std::isfinite(s.step_time_seconds) && s.step_time_seconds >= 0 &&
          s.step_time_seconds <= kMaxStepSeconds);
    Check(AbsentOrWithin(s.tflops_per_device, kMaxTflopsPerDevice));
    Check(AbsentOrWithin(s.tokens_per_device_per_second, kMaxTokensPerDevicePerSecond));
  }
  if (doc->process) {
    Check(doc->process->workers >= 0 && doc->process->workers <= kMaxWorkersSeen);
    Check(doc->process->worker_busy_fraction >= -1 && doc->process->worker_busy_fraction <= 1);
  }
  const graintune::Result<graintune::Trial> trial = graintune::op::TrialFromSteps(1, 8, *doc, 65536, 2);
  if (trial.ok()) {
    for (double v : {trial->step_seconds_p50, trial->step_seconds_p90, trial->step_seconds_mean,
                     trial->tokens_per_second_per_host, trial->stall_fraction, trial->tflops_per_device})
      Check(std::isfinite(v));
  }
  return 0;
}
